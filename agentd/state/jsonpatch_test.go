package state_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/agentnode/agentnode/agentd/state"
)

// Cases after RFC 6902 appendix A, plus the $inc/$push extensions.
func TestPatch_Apply(t *testing.T) {
	cases := []struct{ doc, patch, want, code string }{
		{`{"foo":"bar"}`, `[{"op":"add","path":"/baz","value":"qux"}]`, `{"baz":"qux","foo":"bar"}`, ""},
		{`{"foo":["bar","baz"]}`, `[{"op":"add","path":"/foo/1","value":"qux"}]`, `{"foo":["bar","qux","baz"]}`, ""},
		{`{"baz":"qux","foo":"bar"}`, `[{"op":"remove","path":"/baz"}]`, `{"foo":"bar"}`, ""},
		{`{"foo":["bar","qux","baz"]}`, `[{"op":"remove","path":"/foo/1"}]`, `{"foo":["bar","baz"]}`, ""},
		{`{"baz":"qux","foo":"bar"}`, `[{"op":"replace","path":"/baz","value":"boo"}]`, `{"baz":"boo","foo":"bar"}`, ""},
		{`{"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}}`, `[{"op":"move","from":"/foo/waldo","path":"/qux/thud"}]`,
			`{"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}}`, ""},
		{`{"foo":["all","grass","cows","eat"]}`, `[{"op":"move","from":"/foo/1","path":"/foo/3"}]`, `{"foo":["all","cows","eat","grass"]}`, ""},
		{`{"baz":"qux","foo":["a",2,"c"]}`, `[{"op":"test","path":"/baz","value":"qux"},{"op":"test","path":"/foo/1","value":2}]`, `{"baz":"qux","foo":["a",2,"c"]}`, ""},
		{`{"baz":"qux"}`, `[{"op":"test","path":"/baz","value":"bar"}]`, "", state.CodeConflict},
		{`{"foo":"bar"}`, `[{"op":"add","path":"/child","value":{"grandchild":{}}}]`, `{"child":{"grandchild":{}},"foo":"bar"}`, ""},
		{`{"foo":"bar"}`, `[{"op":"add","path":"/baz/bat","value":"qux"}]`, "", state.CodeInvalidInput},
		{`{"/":9,"~1":10}`, `[{"op":"test","path":"/~01","value":10}]`, `{"/":9,"~1":10}`, ""},
		{`{"foo":["bar"]}`, `[{"op":"add","path":"/foo/-","value":["abc","def"]}]`, `{"foo":["bar",["abc","def"]]}`, ""},
		{`{"foo":"bar"}`, `[{"op":"copy","from":"/foo","path":"/baz"}]`, `{"baz":"bar","foo":"bar"}`, ""},
		{`{"foo":[1]}`, `[{"op":"add","path":"/foo/01","value":2}]`, "", state.CodeInvalidInput},
		{`{"foo":[1]}`, `[{"op":"remove","path":"/foo/1"}]`, "", state.CodeInvalidInput},
		{`{"n":1}`, `[{"op":"$inc","path":"/n","value":2},{"op":"$inc","path":"/m","value":1.5}]`, `{"m":1.5,"n":3}`, ""},
		{`{"n":1.5}`, `{"$inc":{"n":1}}`, `{"n":2.5}`, ""},
		{`{"a":{"b":[1]}}`, `{"$push":{"a.b":2,"a.c":{"$each":[3,4]}}}`, `{"a":{"b":[1,2],"c":[3,4]}}`, ""},
		{`{"a":1}`, `{"$set":{"/a":2,"b":3}}`, `{"a":2,"b":3}`, ""},
		{`{"a":1}`, `[{"op":"replace","path":"","value":{"z":0}}]`, `{"z":0}`, ""},
		{`{"a":1}`, `[{"op":"replace","path":"","value":[1]}]`, "", state.CodeInvalidInput},
		{`{"a":1}`, `{"$unset":{"a":1}}`, "", state.CodeInvalidInput},
	}
	for _, tc := range cases {
		var doc map[string]any
		dec := json.NewDecoder(stringsReader(tc.doc))
		dec.UseNumber()
		dec.Decode(&doc)
		before := js(doc)
		got, err := applyPatch(doc, tc.patch)
		if js(doc) != before {
			t.Errorf("%s: the input document was modified", tc.patch)
		}
		if tc.code != "" {
			var e *state.Error
			if !errors.As(err, &e) || e.Code != tc.code {
				t.Errorf("%s on %s: err %v, want %s", tc.patch, tc.doc, err, tc.code)
			}
			continue
		}
		if err != nil || js(got) != tc.want {
			t.Errorf("%s on %s: got %s (%v), want %s", tc.patch, tc.doc, js(got), err, tc.want)
		}
	}
}

func applyPatch(doc map[string]any, patch string) (map[string]any, error) {
	p, err := state.ParsePatch([]byte(patch))
	if err != nil {
		return nil, err
	}
	out, _, err := p.Apply(doc)
	return out, err
}
