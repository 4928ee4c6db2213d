package state_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/agentd/state/store"
)

func TestRuntime_NoteRoundTrip(t *testing.T) {
	ctx := context.Background()
	rt := openRuntime(t, "", state.Options{})
	c := caller(agentA1, owner1, capNote)
	d := must[*state.Document](t)(rt.Create(ctx, c, noteURI, note(id1, "Standup", "notes from the meeting", "meeting")))
	if d.ID != id1 || d.Owner != owner1 || d.Agent != agentA1 || d.Scope != "sc:test" || d.Visibility != "private" {
		t.Fatalf("created %+v", d)
	}
	must[*state.Document](t)(rt.Create(ctx, c, noteURI, note(id2, "Groceries", "milk", "home")))
	_, err := rt.Create(ctx, c, noteURI, note(id1, "again", "x"))
	wantCode(t, err, state.CodeConflict)

	patch := `[{"op":"replace","path":"/title","value":"Daily standup"},
	  {"op":"add","path":"/tags/-","value":"work"},
	  {"op":"replace","path":"/body","value":"short notes from the team meeting"}]`
	d = must[*state.Document](t)(rt.Update(ctx, c, noteURI, id1, []byte(patch)))
	got := object(t, d)
	if got["title"] != "Daily standup" || got["body"] != "short notes from the team meeting" || js(got["tags"]) != `["meeting","work"]` {
		t.Fatalf("updated %v", got)
	}
	// The body change is a minimal diff: two small inserts, no delete.
	hist := must[[]store.Envelope](t)(rt.History(ctx, c, noteURI, id1))
	var text []string
	for _, e := range hist {
		if e.Op.Key == "body" && e.Op.Child != nil {
			text = append(text, e.Op.Child.Kind+":"+e.Op.Child.Text)
		}
	}
	if want := []string{"insert:notes from the meeting", "insert: team", "insert:short "}; !slices.Equal(text, want) {
		t.Errorf("body ops = %q, want %q", text, want)
	}

	q := fmt.Sprintf(`{"select":["title"],"from":%q,"where":{"tags":{"$contains":"meeting"}},"order":[{"field":"title","direction":"asc"}],"limit":10}`, noteURI)
	res := must[*state.QueryResult](t)(rt.Query(ctx, c, []byte(q)))
	if len(res.Rows) != 1 || res.Rows[0]["title"] != "Daily standup" {
		t.Fatalf("query rows = %v", res.Rows)
	}

	for _, bad := range []string{
		fmt.Sprintf(`{"from":%q,"where":{"title":{"$regex":"x"}}}`, noteURI),
		fmt.Sprintf(`{"from":%q,"where":{"title; DROP TABLE cap_note_docs":1}}`, noteURI),
		fmt.Sprintf(`{"from":%q,"limit":-1}`, noteURI),
		`not json`,
	} {
		_, err := rt.Query(ctx, c, []byte(bad))
		wantCode(t, err, state.CodeInvalidInput)
	}
	_, err = rt.Query(ctx, c, []byte(`{"from":"did:nuwa:state:nope#v1"}`))
	wantCode(t, err, state.CodeNotFound)

	if err := rt.Delete(ctx, c, noteURI, id1, state.DeleteTombstone); err != nil {
		t.Fatal(err)
	}
	_, err = rt.Get(ctx, c, noteURI, id1)
	wantCode(t, err, state.CodeNotFound)
	_, err = rt.Update(ctx, c, noteURI, id1, []byte(`{"$set":{"title":"zombie"}}`))
	wantCode(t, err, state.CodeNotFound)
	hist = must[[]store.Envelope](t)(rt.History(ctx, c, noteURI, id1))
	if last := hist[len(hist)-1]; last.Action != store.ActionTombstone || hist[0].Action != store.ActionCreate {
		t.Errorf("history ends with %s, starts with %s", last.Action, hist[0].Action)
	}
	res = must[*state.QueryResult](t)(rt.Query(ctx, c, []byte(fmt.Sprintf(`{"from":%q}`, noteURI))))
	if len(res.Rows) != 1 || res.Rows[0]["id"] != id2 {
		t.Fatalf("after tombstone: %v", res.Rows)
	}

	if err := rt.Delete(ctx, c, noteURI, id2, state.DeleteHard); err != nil {
		t.Fatal(err)
	}
	_, err = rt.History(ctx, c, noteURI, id2)
	wantCode(t, err, state.CodeNotFound)
	var n int
	rt.Store().DB().QueryRow(`SELECT count(*) FROM cap_note_ops WHERE doc_id = ? AND action != 'purge'`, id2).Scan(&n)
	if n != 0 {
		t.Errorf("%d ops left after hard delete", n)
	}
	err = rt.Delete(ctx, c, noteURI, id2, state.DeleteHard)
	wantCode(t, err, state.CodeNotFound)
	wantCode(t, rt.Delete(ctx, c, noteURI, id1, "shred"), state.CodeInvalidInput)
}

func TestRuntime_CreateAssignsID(t *testing.T) {
	ctx := context.Background()
	rt := openRuntime(t, "", state.Options{})
	c := caller(agentA1, owner1, capCard)
	d := must[*state.Document](t)(rt.Create(ctx, c, cardURI, []byte(`{"title":"no id"}`)))
	if len(d.ID) != 36 || strings.Contains(string(d.Object), `"id"`) {
		t.Fatalf("id %q, object %s", d.ID, d.Object)
	}
	// The note schema declares id: a generated id is written into the object.
	n := note("", "t", "b")
	n = []byte(strings.Replace(string(n), `"id":"",`, "", 1))
	d = must[*state.Document](t)(rt.Create(ctx, caller(agentA1, owner1, capNote), noteURI, n))
	if object(t, d)["id"] != d.ID {
		t.Fatalf("object id %v, doc id %s", object(t, d)["id"], d.ID)
	}
	_, err := rt.Create(ctx, c, cardURI, []byte(`{"id":7,"title":"x"}`))
	wantCode(t, err, state.CodeInvalidInput)
	_, err = rt.Create(ctx, c, cardURI, []byte(`{"title":5}`))
	wantCode(t, err, state.CodeInvalidInput)
	_, err = rt.Create(ctx, c, cardURI, []byte(`[1]`))
	wantCode(t, err, state.CodeInvalidInput)
	_, err = rt.Create(ctx, c, "did:nuwa:state:nope#v1", []byte(`{}`))
	wantCode(t, err, state.CodeNotFound)
}
