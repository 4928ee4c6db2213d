package state_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentnode/agentnode/agentd/state"
)

const (
	capKV     = "did:nuwa:cap:kv@1.0.0"
	prefsURI  = "did:nuwa:app:kv:state:Prefs#v1"
	todoURI   = "did:nuwa:state:todo#v1"
	eventsURI = "did:nuwa:state:events#v1"
)

const prefsSchema = `{"$id":"did:nuwa:app:kv:state:Prefs#v1","type":"object","x-asm":{"container":"map"},
 "properties":{"items":{"type":"object","additionalProperties":{"type":"object",
   "properties":{"v":{"type":"string"},"n":{"type":"number"}},"required":["v"]}}}}`

const todoSchema = `{"$id":"did:nuwa:state:todo#v1","type":"object","x-asm":{"container":"list","x-visibility":"shared"},
 "properties":{"name":{"type":"string","x-index":true},"items":{"type":"array","items":{"type":"object",
   "properties":{"text":{"type":"string"},"done":{"type":"boolean"}},"required":["text"]}}},"required":["name"]}`

const eventsSchema = `{"$id":"did:nuwa:state:events#v1","type":"object","x-asm":{"container":"log","x-compression":"zstd"},
 "properties":{"kind":{"type":"string"},"entries":{"type":"array","items":{"type":"object","required":["e"]}}}}`

func containersRuntime(t *testing.T) (*state.Runtime, state.Caller) {
	rt := openRuntime(t, "", state.Options{})
	for _, s := range []string{prefsSchema, todoSchema, eventsSchema} {
		mustRegister(t, rt, capKV, s)
	}
	return rt, caller(agentA1, owner1, capKV)
}

func TestContainer_Map(t *testing.T) {
	ctx := context.Background()
	rt, c := containersRuntime(t)
	d := must[*state.Document](t)(rt.Create(ctx, c, prefsURI, []byte(`{"id":"p","items":{"a":{"v":"x","n":1}}}`)))
	if got := js(object(t, d)["items"]); got != `{"a":{"n":1,"v":"x"}}` {
		t.Fatalf("created items %s", got)
	}
	d = must[*state.Document](t)(rt.Update(ctx, c, prefsURI, "p", []byte(`[
	  {"op":"add","path":"/items/b","value":{"v":"y"}},
	  {"op":"replace","path":"/items/a/n","value":2},
	  {"op":"$inc","path":"/items/b/n","value":5}]`)))
	if got := js(object(t, d)["items"]); got != `{"a":{"n":2,"v":"x"},"b":{"n":5,"v":"y"}}` {
		t.Fatalf("updated items %s", got)
	}
	d = must[*state.Document](t)(rt.Update(ctx, c, prefsURI, "p", []byte(`[{"op":"remove","path":"/items/a"}]`)))
	if got := js(object(t, d)["items"]); got != `{"b":{"n":5,"v":"y"}}` {
		t.Fatalf("after remove %s", got)
	}
	_, err := rt.Update(ctx, c, prefsURI, "p", []byte(`[{"op":"add","path":"/items/c","value":{"n":1}}]`))
	wantCode(t, err, state.CodeInvalidInput) // v is required
	res := must[*state.QueryResult](t)(rt.Query(ctx, c, []byte(fmt.Sprintf(`{"from":%q,"where":{"items.b.n":{"$gte":5}}}`, prefsURI))))
	if len(res.Rows) != 1 {
		t.Fatalf("query: %v", res.Rows)
	}
	if err := rt.Delete(ctx, c, prefsURI, "p", "tombstone"); err != nil {
		t.Fatal(err)
	}
	_, err = rt.Get(ctx, c, prefsURI, "p")
	wantCode(t, err, state.CodeNotFound)
}

func TestContainer_List(t *testing.T) {
	ctx := context.Background()
	rt, c := containersRuntime(t)
	must[*state.Document](t)(rt.Create(ctx, c, todoURI, []byte(`{"id":"t","name":"chores","items":[{"text":"a"},{"text":"c"}]}`)))
	d := must[*state.Document](t)(rt.Update(ctx, c, todoURI, "t", []byte(`[
	  {"op":"add","path":"/items/1","value":{"text":"b"}},
	  {"op":"add","path":"/items/-","value":{"text":"d"}},
	  {"op":"add","path":"/items/0/done","value":true}]`)))
	want := `[{"done":true,"text":"a"},{"text":"b"},{"text":"c"},{"text":"d"}]`
	if got := js(object(t, d)["items"]); got != want {
		t.Fatalf("items %s, want %s", got, want)
	}
	d = must[*state.Document](t)(rt.Update(ctx, c, todoURI, "t", []byte(`[{"op":"move","from":"/items/3","path":"/items/0"},{"op":"remove","path":"/items/2"}]`)))
	if got := js(object(t, d)["items"]); got != `[{"text":"d"},{"done":true,"text":"a"},{"text":"c"}]` {
		t.Fatalf("after move/remove %s", got)
	}
	res := must[*state.QueryResult](t)(rt.Query(ctx, c, []byte(fmt.Sprintf(`{"select":["name"],"from":%q,"where":{"name":"chores"}}`, todoURI))))
	if len(res.Rows) != 1 || res.Rows[0]["name"] != "chores" {
		t.Fatalf("query: %v", res.Rows)
	}
	if err := rt.Delete(ctx, c, todoURI, "t", "hard"); err != nil {
		t.Fatal(err)
	}
	_, err := rt.Get(ctx, c, todoURI, "t")
	wantCode(t, err, state.CodeNotFound)
}

func TestContainer_Log(t *testing.T) {
	ctx := context.Background()
	rt, c := containersRuntime(t)
	must[*state.Document](t)(rt.Create(ctx, c, eventsURI, []byte(`{"id":"l","kind":"audit","entries":[{"e":1}]}`)))
	d := must[*state.Document](t)(rt.Update(ctx, c, eventsURI, "l", []byte(`{"$push":{"entries":{"$each":[{"e":2},{"e":3}]}}}`)))
	if got := js(object(t, d)["entries"]); got != `[{"e":1},{"e":2},{"e":3}]` {
		t.Fatalf("entries after $push %s", got)
	}
	d = must[*state.Document](t)(rt.Update(ctx, c, eventsURI, "l", []byte(`[{"op":"add","path":"/entries/-","value":{"e":4}}]`)))
	if got := js(object(t, d)["entries"]); got != `[{"e":1},{"e":2},{"e":3},{"e":4}]` {
		t.Fatalf("entries %s", got)
	}
	for _, p := range []string{
		`[{"op":"remove","path":"/entries/0"}]`,
		`[{"op":"replace","path":"/entries/1","value":{"e":9}}]`,
		`[{"op":"add","path":"/entries/0","value":{"e":0}}]`,
		`[{"op":"remove","path":"/entries"}]`,
	} {
		_, err := rt.Update(ctx, c, eventsURI, "l", []byte(p))
		wantCode(t, err, state.CodeInvalidInput)
	}
	res := must[*state.QueryResult](t)(rt.Query(ctx, c, []byte(fmt.Sprintf(`{"from":%q,"where":{"kind":"audit"}}`, eventsURI))))
	if len(res.Rows) != 1 {
		t.Fatalf("query: %v", res.Rows)
	}
	if err := rt.Delete(ctx, c, eventsURI, "l", ""); err != nil {
		t.Fatal(err)
	}
	_, err := rt.Get(ctx, c, eventsURI, "l")
	wantCode(t, err, state.CodeNotFound)
}
