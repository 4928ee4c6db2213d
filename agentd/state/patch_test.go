package state_test

import (
	"context"
	"testing"

	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/agentd/state/store"
)

func TestUpdate_EveryCRDT(t *testing.T) {
	ctx := context.Background()
	rt := openRuntime(t, "", state.Options{})
	c := caller(agentA1, owner1, capCard)
	must[*state.Document](t)(rt.Create(ctx, c, cardURI, []byte(`{"id":"c","title":"t","views":1,"pinned":false,"status":"new","meta":{"a":{"b":1}}}`)))
	patch := `[
	  {"op":"$inc","path":"/views","value":41},
	  {"op":"replace","path":"/pinned","value":true},
	  {"op":"$push","path":"/tags","value":"x"},
	  {"op":"add","path":"/tags/-","value":"a"},
	  {"op":"$push","path":"/events","value":{"k":"opened"}},
	  {"op":"add","path":"/steps/-","value":"one"},
	  {"op":"add","path":"/steps/0","value":"zero"},
	  {"op":"replace","path":"/meta/a/b","value":2},
	  {"op":"add","path":"/meta/c","value":[1,2]},
	  {"op":"replace","path":"/status","value":"open"},
	  {"op":"add","path":"/body","value":"hello"},
	  {"op":"add","path":"/extra","value":{"k":{"deep":true}}},
	  {"op":"copy","from":"/title","path":"/extra/k/title"}
	]`
	d := must[*state.Document](t)(rt.Update(ctx, c, cardURI, "c", []byte(patch)))
	want := `{"body":"hello","events":[{"k":"opened"}],"extra":{"k":{"deep":true,"title":"t"}},"meta":{"a":{"b":2},"c":[1,2]},"pinned":true,"status":"open","steps":["zero","one"],"tags":["a","x"],"title":"t","views":42}`
	if got := js(object(t, d)); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	// Ops follow the field CRDTs.
	hist := must[[]store.Envelope](t)(rt.History(ctx, c, cardURI, "c"))
	kinds := map[string]string{}
	for _, e := range hist {
		if e.Action == store.ActionOp {
			kinds[e.Op.Key] = e.Op.Child.Kind
		}
	}
	for field, kind := range map[string]string{"views": "inc", "pinned": "enable", "tags": "add", "events": "append",
		"steps": "insert", "meta": "put", "status": "set", "body": "insert", "title": "set"} {
		if kinds[field] != kind {
			t.Errorf("%s: last op %q, want %q", field, kinds[field], kind)
		}
	}
	d = must[*state.Document](t)(rt.Update(ctx, c, cardURI, "c", []byte(`{"$inc":{"views":-2},"$set":{"pinned":false}}`)))
	if o := object(t, d); o["views"] != float64(40) || o["pinned"] != false {
		t.Fatalf("object form: %v", o)
	}
}

func TestUpdate_Refusals(t *testing.T) {
	ctx := context.Background()
	rt := openRuntime(t, "", state.Options{})
	c := caller(agentA1, owner1, capCard)
	must[*state.Document](t)(rt.Create(ctx, c, cardURI, []byte(`{"id":"c","title":"t","tags":["a"],"views":3}`)))
	before := must[[]store.Envelope](t)(rt.History(ctx, c, cardURI, "c"))
	cases := map[string]struct{ patch, code string }{
		"failing test":     {`[{"op":"replace","path":"/title","value":"u"},{"op":"test","path":"/title","value":"t"}]`, state.CodeConflict},
		"test absent":      {`[{"op":"test","path":"/nope","value":1}]`, state.CodeConflict},
		"schema violation": {`[{"op":"replace","path":"/title","value":5}]`, state.CodeInvalidInput},
		"unknown field":    {`[{"op":"add","path":"/bogus","value":5}]`, state.CodeInvalidInput},
		"missing required": {`[{"op":"remove","path":"/title"}]`, state.CodeInvalidInput},
		"set shrinks":      {`[{"op":"remove","path":"/tags/0"}]`, state.CodeInvalidInput},
		"counter float":    {`[{"op":"$inc","path":"/views","value":0.5}]`, state.CodeInvalidInput},
		"id added":         {`[{"op":"add","path":"/id","value":"d"}]`, state.CodeInvalidInput},
		"bad path":         {`[{"op":"replace","path":"title","value":"x"}]`, state.CodeInvalidInput},
		"missing path":     {`[{"op":"replace","path":"/body/x","value":"x"}]`, state.CodeInvalidInput},
		"unknown op":       {`[{"op":"merge","path":"/title","value":"x"}]`, state.CodeInvalidInput},
		"inc string":       {`[{"op":"$inc","path":"/title","value":1}]`, state.CodeInvalidInput},
		"push non-array":   {`[{"op":"$push","path":"/title","value":1}]`, state.CodeInvalidInput},
		"empty":            {`[]`, state.CodeInvalidInput},
		"not json":         {`{"$set":`, state.CodeInvalidInput},
		"move into self":   {`[{"op":"move","from":"/extra","path":"/extra/x"}]`, state.CodeInvalidInput},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := rt.Update(ctx, c, cardURI, "c", []byte(tc.patch))
			wantCode(t, err, tc.code)
		})
	}
	after := must[[]store.Envelope](t)(rt.History(ctx, c, cardURI, "c"))
	d := must[*state.Document](t)(rt.Get(ctx, c, cardURI, "c"))
	if len(after) != len(before) || js(object(t, d)) != `{"events":[],"meta":{},"steps":[],"tags":["a"],"title":"t","views":3}` {
		t.Fatalf("refused patches wrote something: %d -> %d ops, %s", len(before), len(after), d.Object)
	}
	// A passing test lets the patch through.
	d = must[*state.Document](t)(rt.Update(ctx, c, cardURI, "c", []byte(`[{"op":"test","path":"/views","value":3.0},{"op":"replace","path":"/title","value":"u"}]`)))
	if object(t, d)["title"] != "u" {
		t.Fatalf("after passing test: %s", d.Object)
	}
}
