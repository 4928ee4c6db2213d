package state_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/capabilities"
)

// call runs a tool and returns the decoded result, or the CAP code of its error.
func call(t *testing.T, rt *state.Runtime, c state.Caller, name, args string) (map[string]any, string) {
	t.Helper()
	out, err := rt.CallTool(context.Background(), c, name, json.RawMessage(args))
	if err != nil {
		var ce *capabilities.Error
		if !errors.As(err, &ce) {
			t.Fatalf("%s: error %v is not a *capabilities.Error", name, err)
		}
		return nil, ce.Code
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("%s: result %s: %v", name, out, err)
	}
	return m, ""
}

func TestRuntime_CallTool_RoundTrip(t *testing.T) {
	rt := openRuntime(t, "", state.Options{})
	c := state.CallerFromACP(agentA1, owner1, capNote, "sc:note", state.AllVerbs)

	created, code := call(t, rt, c, state.ToolCreate, fmt.Sprintf(`{"schema_uri":%q,"object":%s}`, noteURI, note(id1, "Groceries", "milk", "home")))
	if code != "" {
		t.Fatalf("create: %s", code)
	}
	if got, want := created["id"], id1; got != want {
		t.Fatalf("created id = %v, want %v", got, want)
	}
	if got := created["scope"]; got != "sc:note" {
		t.Fatalf("scope = %v, want sc:note", got)
	}

	_, code = call(t, rt, c, state.ToolUpdate, fmt.Sprintf(`{"schema_uri":%q,"id":%q,"patch":[{"op":"replace","path":"/title","value":"Shopping"}]}`, noteURI, id1))
	if code != "" {
		t.Fatalf("update: %s", code)
	}
	got, code := call(t, rt, c, state.ToolGet, fmt.Sprintf(`{"schema_uri":%q,"id":%q}`, noteURI, id1))
	if code != "" {
		t.Fatalf("get: %s", code)
	}
	if title := got["object"].(map[string]any)["title"]; title != "Shopping" {
		t.Fatalf("title after update = %v, want Shopping", title)
	}

	res, code := call(t, rt, c, state.ToolQuery, fmt.Sprintf(`{"from":%q,"select":["id","title"],"where":{"tags":{"$contains":"home"}}}`, noteURI))
	if code != "" {
		t.Fatalf("query: %s", code)
	}
	rows := res["rows"].([]any)
	if len(rows) != 1 || rows[0].(map[string]any)["title"] != "Shopping" {
		t.Fatalf("query rows = %v, want the one note titled Shopping", rows)
	}

	hist, code := call(t, rt, c, state.ToolHistory, fmt.Sprintf(`{"schema_uri":%q,"id":%q}`, noteURI, id1))
	if code != "" {
		t.Fatalf("history: %s", code)
	}
	if n := len(hist["entries"].([]any)); n < 2 {
		t.Fatalf("history has %d entries, want the create marker and the ops", n)
	}

	del, code := call(t, rt, c, state.ToolDelete, fmt.Sprintf(`{"schema_uri":%q,"id":%q}`, noteURI, id1))
	if code != "" || del["deleted"] != true || del["mode"] != state.DeleteTombstone {
		t.Fatalf("delete = %v, %s; want deleted tombstone", del, code)
	}
	if _, code := call(t, rt, c, state.ToolGet, fmt.Sprintf(`{"schema_uri":%q,"id":%q}`, noteURI, id1)); code != capabilities.CodeNotFound {
		t.Fatalf("get after delete: code %q, want NOT_FOUND", code)
	}
}

func TestRuntime_CallTool_ErrorCodes(t *testing.T) {
	rt := openRuntime(t, "", state.Options{MaxObjectSize: 4096})
	all := state.CallerFromACP(agentA1, owner1, capNote, "sc:note", state.AllVerbs)
	readOnly := state.CallerFromACP(agentA1, owner1, capNote, "sc:note", []string{state.VerbQuery})
	otherCap := state.CallerFromACP(agentA1, owner1, capCard, "sc:card", state.AllVerbs)
	if _, code := call(t, rt, all, state.ToolCreate, fmt.Sprintf(`{"schema_uri":%q,"object":%s}`, noteURI, note(id1, "a", "b"))); code != "" {
		t.Fatalf("seed: %s", code)
	}
	big := make([]byte, 5000)
	for i := range big {
		big[i] = 'x'
	}
	tests := []struct {
		name   string
		caller state.Caller
		tool   string
		args   string
		want   string
		prefix string // of the message, when the code was mapped
	}{
		{"verb not declared", readOnly, state.ToolCreate, fmt.Sprintf(`{"schema_uri":%q,"object":%s}`, noteURI, note(id2, "a", "b")), capabilities.CodePermissionDenied, ""},
		{"other capability's namespace", otherCap, state.ToolGet, fmt.Sprintf(`{"schema_uri":%q,"id":%q}`, noteURI, id1), capabilities.CodePermissionDenied, ""},
		{"unknown schema", all, state.ToolGet, `{"schema_uri":"did:nuwa:state:nope#v1","id":"x"}`, capabilities.CodeNotFound, ""},
		{"missing document", all, state.ToolGet, fmt.Sprintf(`{"schema_uri":%q,"id":%q}`, noteURI, id3), capabilities.CodeNotFound, ""},
		{"unknown tool", all, "state.explode", `{}`, capabilities.CodeNotFound, ""},
		{"schema violation", all, state.ToolCreate, fmt.Sprintf(`{"schema_uri":%q,"object":{"title":1}}`, noteURI), capabilities.CodeInvalidInput, ""},
		{"unknown argument", all, state.ToolGet, fmt.Sprintf(`{"schema_uri":%q,"id":%q,"extra":1}`, noteURI, id1), capabilities.CodeInvalidInput, ""},
		{"missing id", all, state.ToolGet, fmt.Sprintf(`{"schema_uri":%q}`, noteURI), capabilities.CodeInvalidInput, ""},
		{"not JSON", all, state.ToolGet, `{"schema_uri":`, capabilities.CodeInvalidInput, ""},
		{"bad query", all, state.ToolQuery, fmt.Sprintf(`{"from":%q,"where":{"title":{"$nope":1}}}`, noteURI), capabilities.CodeInvalidInput, ""},
		{"conflict: id exists", all, state.ToolCreate, fmt.Sprintf(`{"schema_uri":%q,"object":%s}`, noteURI, note(id1, "a", "b")), capabilities.CodeInvalidInput, "CONFLICT: "},
		{"conflict: failed test op", all, state.ToolUpdate, fmt.Sprintf(`{"schema_uri":%q,"id":%q,"patch":[{"op":"test","path":"/title","value":"zzz"}]}`, noteURI, id1), capabilities.CodeInvalidInput, "CONFLICT: "},
		{"too large", all, state.ToolCreate, fmt.Sprintf(`{"schema_uri":%q,"object":%s}`, noteURI, note(id2, "a", string(big))), capabilities.CodeInvalidInput, "TOO_LARGE: "},
		{"bad delete mode", all, state.ToolDelete, fmt.Sprintf(`{"schema_uri":%q,"id":%q,"mode":"shred"}`, noteURI, id1), capabilities.CodeInvalidInput, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := rt.CallTool(context.Background(), tt.caller, tt.tool, json.RawMessage(tt.args))
			var ce *capabilities.Error
			if !errors.As(err, &ce) || ce.Code != tt.want {
				t.Fatalf("err = %v, want code %q", err, tt.want)
			}
			if !strings.HasPrefix(ce.Message, tt.prefix) {
				t.Fatalf("message %q does not start with %q", ce.Message, tt.prefix)
			}
		})
	}
}

func TestRuntime_CallTool_KeepsRuntimeCode(t *testing.T) {
	rt := openRuntime(t, "", state.Options{})
	c := state.CallerFromACP(agentA1, owner1, capNote, "sc:note", state.AllVerbs)
	args := fmt.Sprintf(`{"schema_uri":%q,"object":%s}`, noteURI, note(id1, "a", "b"))
	if _, err := rt.CallTool(context.Background(), c, state.ToolCreate, json.RawMessage(args)); err != nil {
		t.Fatal(err)
	}
	_, err := rt.CallTool(context.Background(), c, state.ToolCreate, json.RawMessage(args))
	var ce *capabilities.Error
	if !errors.As(err, &ce) || ce.Code != capabilities.CodeInvalidInput {
		t.Fatalf("err = %v, want INVALID_INPUT", err)
	}
	if !errors.Is(err, state.ErrConflict) {
		t.Fatalf("err %v does not wrap the runtime's CONFLICT", err)
	}
	if want := "CONFLICT: "; len(ce.Message) < len(want) || ce.Message[:len(want)] != want {
		t.Fatalf("message %q does not start with %q", ce.Message, want)
	}
}

func TestToolDefs(t *testing.T) {
	defs := state.ToolDefs()
	names := map[string]bool{}
	for _, d := range defs {
		names[d.Name] = true
		var schema map[string]any
		if err := json.Unmarshal(d.Parameters, &schema); err != nil || schema["type"] != "object" {
			t.Errorf("%s: parameters %s are not an object schema (%v)", d.Name, d.Parameters, err)
		}
		if !state.IsTool(d.Name) {
			t.Errorf("IsTool(%q) = false", d.Name)
		}
	}
	for _, n := range []string{"state.create", "state.update", "state.query", "state.get", "state.delete", "state.history"} {
		if !names[n] {
			t.Errorf("ToolDefs lacks %s", n)
		}
	}
	defs[0].Parameters[0] = 'X'
	if state.ToolDefs()[0].Parameters[0] == 'X' {
		t.Fatal("ToolDefs shares its parameters with callers")
	}
}
