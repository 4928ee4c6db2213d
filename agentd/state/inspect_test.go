package state_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/agentnode/agentnode/agentd/state"
)

// A replica that received a document's later ops but not its create
// marker (a late joiner before anti-entropy) says the document is
// incomplete; once the rest arrives it no longer does. Concurrent
// mv_register values are all shown beside the winner.
func TestGet_IncompleteAndConcurrent(t *testing.T) {
	ctx := context.Background()
	a := openRuntime(t, t.TempDir(), state.Options{})
	b := openRuntime(t, t.TempDir(), state.Options{})
	c := caller(agentA1, owner1, capCard)
	if _, err := a.Create(ctx, c, cardURI, json.RawMessage(`{"id":"c1","title":"t","status":"draft"}`)); err != nil {
		t.Fatal(err)
	}
	first, err := lastSeq(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Update(ctx, c, cardURI, "c1", []byte(`[{"op":"replace","path":"/title","value":"Hello again"}]`)); err != nil {
		t.Fatal(err)
	}
	later, err := a.Store().OpsSince(ctx, "cap_card", first, 100)
	if err != nil || len(later) == 0 {
		t.Fatal(later, err)
	}
	if _, err := b.Store().ApplyRemote(ctx, later); err != nil {
		t.Fatal(err)
	}
	d, err := b.Get(ctx, c, cardURI, "c1")
	if err != nil || d.Incomplete == "" {
		t.Fatalf("partial document not flagged: %+v %v", d, err)
	}
	all, _ := a.Store().OpsSince(ctx, "cap_card", 0, 100)
	b.Store().ApplyRemote(ctx, all)
	if _, err := b.Update(ctx, c, cardURI, "c1", []byte(`[{"op":"replace","path":"/status","value":"done"}]`)); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Update(ctx, c, cardURI, "c1", []byte(`[{"op":"replace","path":"/status","value":"review"}]`)); err != nil {
		t.Fatal(err)
	}
	bs, _ := b.Store().OpsSince(ctx, "cap_card", 0, 100)
	a.Store().ApplyRemote(ctx, bs)
	d, err = a.Get(ctx, c, cardURI, "c1")
	if err != nil || d.Incomplete != "" {
		t.Fatalf("complete document flagged: %+v %v", d, err)
	}
	if got := len(d.Concurrent["status"]); got != 2 {
		t.Fatalf("concurrent status values = %v, want 2", d.Concurrent)
	}
}

func lastSeq(ctx context.Context, rt *state.Runtime) (int64, error) {
	envs, err := rt.Store().OpsSince(ctx, "cap_card", 0, 1000)
	if err != nil || len(envs) == 0 {
		return 0, err
	}
	return envs[len(envs)-1].Seq, nil
}

// The concurrent values of an mv_register reach the state.* tools: state.get
// returns them in "concurrent" beside the object, state.query per row's
// document id, for the mv_register fields the query returns.
func TestTools_ConcurrentValues(t *testing.T) {
	ctx := context.Background()
	a := openRuntime(t, t.TempDir(), state.Options{})
	b := openRuntime(t, t.TempDir(), state.Options{})
	c := caller(agentA1, owner1, capCard)
	for _, id := range []string{"c1", "c2"} {
		if _, err := a.Create(ctx, c, cardURI, json.RawMessage(`{"id":"`+id+`","title":"t","status":"draft"}`)); err != nil {
			t.Fatal(err)
		}
	}
	all, _ := a.Store().OpsSince(ctx, "cap_card", 0, 100)
	if _, err := b.Store().ApplyRemote(ctx, all); err != nil {
		t.Fatal(err)
	}
	for rt, v := range map[*state.Runtime]string{a: "review", b: "done"} {
		if _, err := rt.Update(ctx, c, cardURI, "c1", []byte(`[{"op":"replace","path":"/status","value":"`+v+`"}]`)); err != nil {
			t.Fatal(err)
		}
	}
	bs, _ := b.Store().OpsSince(ctx, "cap_card", 0, 100)
	if _, err := a.Store().ApplyRemote(ctx, bs); err != nil {
		t.Fatal(err)
	}

	out, err := a.CallTool(ctx, c, state.ToolGet, json.RawMessage(`{"schema_uri":"`+cardURI+`","id":"c1"}`))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Object     map[string]any      `json:"object"`
		Concurrent map[string][]string `json:"concurrent"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if vals := got.Concurrent["status"]; len(vals) != 2 || !slices.Contains(vals, "review") || !slices.Contains(vals, "done") || got.Object["status"] != vals[1] {
		t.Fatalf("state.get: object status %v, concurrent %v; want both values, the last shown", got.Object["status"], got.Concurrent)
	}

	for _, tc := range []struct {
		query string
		want  bool
	}{
		{`{"from":"` + cardURI + `"}`, true},
		{`{"select":["status"],"from":"` + cardURI + `"}`, true},
		{`{"select":["title"],"from":"` + cardURI + `"}`, false},
	} {
		out, err := a.CallTool(ctx, c, state.ToolQuery, json.RawMessage(tc.query))
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			Rows       []map[string]any               `json:"rows"`
			Concurrent map[string]map[string][]string `json:"concurrent"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Rows) != 2 {
			t.Fatalf("%s: rows %v", tc.query, res.Rows)
		}
		vals := res.Concurrent["c1"]["status"]
		if tc.want != (len(vals) == 2) || len(res.Concurrent) > 1 || res.Concurrent["c2"] != nil {
			t.Fatalf("%s: concurrent %v (want c1's status: %v)", tc.query, res.Concurrent, tc.want)
		}
	}
}
