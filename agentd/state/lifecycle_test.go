package state_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/agentd/state/schema"
	"github.com/agentnode/agentnode/agentd/state/store"
)

const day = 24 * time.Hour

func TestLifecycle_TTLLog(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	rt := openRuntime(t, "", state.Options{Now: clk.Now})
	c := state.Caller{Agent: agentA1, Owner: owner1, Verbs: state.AllVerbs}
	for i := range 3 {
		must[*state.Document](t)(rt.AppendConversation(ctx, c, state.RoleUser, fmt.Sprint("old ", i)))
	}
	clk.Advance(10 * day)
	for i := range 2 {
		must[*state.Document](t)(rt.AppendConversation(ctx, c, state.RoleUser, fmt.Sprint("new ", i)))
	}
	old := must[[]store.Envelope](t)(rt.History(ctx, c, schema.ConversationLogURI, agentA1))
	lc := state.NewLifecycle(rt, state.LifecycleOptions{Now: func() time.Time { return clk.Now().Add(5 * day) }})
	rep := must[state.LifecycleReport](t)(lc.RunOnce(ctx))
	if rep.ExpiredOps != 3 {
		t.Fatalf("report %+v", rep)
	}
	d := must[*state.Document](t)(rt.Get(ctx, c, schema.ConversationLogURI, agentA1))
	entries := object(t, d)["entries"].([]any)
	if len(entries) != 2 || entries[0].(map[string]any)["content"] != "new 0" {
		t.Fatalf("entries after TTL %v", entries)
	}
	// Idempotent, and a redelivered expired op does not come back.
	if rep := must[state.LifecycleReport](t)(lc.RunOnce(ctx)); rep.ExpiredOps != 0 {
		t.Fatalf("second pass %+v", rep)
	}
	if n, err := rt.Store().ApplyRemote(ctx, old); n != 0 || err != nil {
		t.Fatalf("redelivery applied %d (%v)", n, err)
	}
	if again := must[*state.Document](t)(rt.Get(ctx, c, schema.ConversationLogURI, agentA1)); string(again.Object) != string(d.Object) {
		t.Fatal("redelivered expired ops came back")
	}
	must[*state.Document](t)(rt.AppendConversation(ctx, c, state.RoleAssistant, "after"))
	d = must[*state.Document](t)(rt.Get(ctx, c, schema.ConversationLogURI, agentA1))
	if n := len(object(t, d)["entries"].([]any)); n != 3 {
		t.Fatalf("%d entries after a new append", n)
	}
}

func TestLifecycle_RetentionByImportance(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	rt := openRuntime(t, "", state.Options{Now: clk.Now})
	c := state.Caller{Agent: agentA1, Owner: owner1, Verbs: state.AllVerbs}
	old := clk.Now().Add(-100 * day).Format(time.RFC3339)
	recent := clk.Now().Add(-day).Format(time.RFC3339)
	items := map[string]any{}
	for i, imp := range []float64{0.3, 0.9, 0.1, 0.5, 0.2} {
		items[fmt.Sprint("old", i)] = map[string]any{"value": "v", "importance": imp, "createdAt": old}
	}
	items["fresh-low"] = map[string]any{"value": "v", "importance": 0.0, "createdAt": recent}
	must[*state.Document](t)(rt.Update(ctx, c, schema.MemoryStoreURI, agentA1,
		[]byte(fmt.Sprintf(`[{"op":"replace","path":"/items","value":%s}]`, js(items)))))
	lc := state.NewLifecycle(rt, state.LifecycleOptions{Now: clk.Now, RetentionKeep: 2})
	rep := must[state.LifecycleReport](t)(lc.RunOnce(ctx))
	if rep.EvictedItems != 3 {
		t.Fatalf("report %+v", rep)
	}
	d := must[*state.Document](t)(rt.Get(ctx, c, schema.MemoryStoreURI, agentA1))
	var keys []string
	for k := range object(t, d)["items"].(map[string]any) {
		keys = append(keys, k)
	}
	if got := js(slices.Sorted(slices.Values(keys))); got != `["fresh-low","old1","old3"]` {
		t.Fatalf("kept %s (importance 0.9 and 0.5 beyond the window, and the fresh one)", got)
	}
	// Eviction is a replicated op: the remove shows in history.
	hist := must[[]store.Envelope](t)(rt.History(ctx, c, schema.MemoryStoreURI, agentA1))
	if last := hist[len(hist)-1]; last.Op.Child == nil || last.Op.Child.Kind != "remove" {
		t.Fatalf("last op %+v", last.Op)
	}
}

func TestLifecycle_TTLDocument(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	rt := openRuntime(t, "", state.Options{Now: clk.Now})
	mustRegister(t, rt, capCard, `{"$id":"did:nuwa:state:otp#v1","type":"object","x-asm":{"x-ttl":"PT10M"},"properties":{"code":{"type":"string"}}}`)
	c := caller(agentA1, owner1, capCard)
	must[*state.Document](t)(rt.Create(ctx, c, "did:nuwa:state:otp#v1", []byte(`{"id":"old","code":"1"}`)))
	clk.Advance(9 * time.Minute)
	must[*state.Document](t)(rt.Create(ctx, c, "did:nuwa:state:otp#v1", []byte(`{"id":"new","code":"2"}`)))
	clk.Advance(2 * time.Minute)
	rep := must[state.LifecycleReport](t)(state.NewLifecycle(rt, state.LifecycleOptions{Now: clk.Now}).RunOnce(ctx))
	if rep.PurgedDocs != 1 {
		t.Fatalf("report %+v", rep)
	}
	_, err := rt.Get(ctx, c, "did:nuwa:state:otp#v1", "old")
	wantCode(t, err, state.CodeNotFound)
	must[*state.Document](t)(rt.Get(ctx, c, "did:nuwa:state:otp#v1", "new"))

	// Every pass is recorded in the store: the last one and the sums.
	first := clk.Now()
	clk.Advance(9 * time.Minute)
	must[state.LifecycleReport](t)(state.NewLifecycle(rt, state.LifecycleOptions{Now: clk.Now}).RunOnce(ctx))
	st := must[state.LifecycleStatus](t)(rt.LifecycleStatus(ctx))
	want := state.LifecycleStatus{LastAt: clk.Now(), Last: state.LifecycleReport{PurgedDocs: 1}, Since: first, Passes: 2,
		Totals: state.LifecycleReport{PurgedDocs: 2}}
	if !st.LastAt.Equal(want.LastAt) || !st.Since.Equal(want.Since) || st.Last != want.Last || st.Passes != want.Passes || st.Totals != want.Totals {
		t.Fatalf("status %+v, want %+v", st, want)
	}
}

func TestLifecycle_CompressionRoundTrip(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	rt := openRuntime(t, dir, state.Options{})
	c := state.Caller{Agent: agentA1, Owner: owner1, Verbs: state.AllVerbs}
	for i := range 20 {
		must[*state.Document](t)(rt.AppendConversation(ctx, c, state.RoleUser, fmt.Sprintf("message %d: the quick brown fox jumps over the lazy dog", i)))
	}
	before := must[*state.Document](t)(rt.Get(ctx, c, schema.ConversationLogURI, agentA1))
	hist := must[[]store.Envelope](t)(rt.History(ctx, c, schema.ConversationLogURI, agentA1))
	lc := state.NewLifecycle(rt, state.LifecycleOptions{SnapshotMinOps: 10})
	if rep := must[state.LifecycleReport](t)(lc.RunOnce(ctx)); rep.Snapshots != 1 {
		t.Fatalf("report %+v", rep)
	}
	var codec string
	var raw, size int
	db := rt.Store().DB()
	if err := db.QueryRow(`SELECT codec, raw_size, length(data) FROM core_snaps WHERE doc_id = ?`, agentA1).Scan(&codec, &raw, &size); err != nil {
		t.Fatal(err)
	}
	if codec != schema.Brotli || size*3 > raw {
		t.Fatalf("snapshot %s %d -> %d bytes", codec, raw, size)
	}
	if n := must[int](t)(rt.Store().LiveOps(ctx, mustSchema(t, rt, schema.ConversationLogURI), agentA1)); n != 0 {
		t.Fatalf("%d live ops after snapshot", n)
	}
	if got := must[[]store.Envelope](t)(rt.History(ctx, c, schema.ConversationLogURI, agentA1)); js(got) != js(hist) {
		t.Fatal("history changed by the snapshot")
	}
	rt.Close(ctx)
	rt = openRuntime(t, dir, state.Options{})
	d := must[*state.Document](t)(rt.Get(ctx, c, schema.ConversationLogURI, agentA1))
	if string(d.Object) != string(before.Object) {
		t.Fatal("document changed across snapshot + restart")
	}
	d = must[*state.Document](t)(rt.AppendConversation(ctx, c, state.RoleAssistant, "after restart"))
	if n := len(object(t, d)["entries"].([]any)); n != 21 {
		t.Fatalf("%d entries", n)
	}
	ops := must[[]store.Envelope](t)(rt.Store().OpsSince(ctx, "core", 0, 10000))
	appends := 0
	for _, e := range ops {
		if e.Doc == agentA1 && e.Op.Key == "entries" {
			appends++
		}
	}
	if appends != 21 {
		t.Fatalf("OpsSince gives %d appends, want 21 (snapshot included)", appends)
	}
}

func TestLifecycle_Run(t *testing.T) {
	rt := openRuntime(t, "", state.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- state.NewLifecycle(rt, state.LifecycleOptions{}).Run(ctx, time.Millisecond) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not stop")
	}
}

func mustSchema(t testing.TB, rt *state.Runtime, uri string) *schema.Schema {
	s, ok := rt.Schemas().Lookup(uri)
	if !ok {
		t.Fatalf("no schema %s", uri)
	}
	return s
}
