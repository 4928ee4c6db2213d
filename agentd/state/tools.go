package state

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentnode/agentnode/capabilities"
)

// Names of the state.* tools. state.get and state.history need the
// state.query permission.
const (
	ToolCreate  = "state.create"
	ToolUpdate  = "state.update"
	ToolQuery   = "state.query"
	ToolGet     = "state.get"
	ToolDelete  = "state.delete"
	ToolHistory = "state.history"
)

// toolDefs are the state.* tools as a model and CAP see them.
var toolDefs = []capabilities.ToolDef{
	{Name: ToolCreate, Description: "Persist a new state object. The object is validated against the schema; its id is its \"id\" field, or a new UUID.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"schema_uri":{"type":"string","description":"the schema's $id, e.g. did:nuwa:state:note#v1"},"object":{"type":"object","description":"the new object"}},"required":["schema_uri","object"],"additionalProperties":false}`)},
	{Name: ToolUpdate, Description: "Change a state object with a JSON Patch (RFC 6902 ops add, remove, replace, move, copy, test, plus $inc and $push). Nothing is written if any op fails.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"schema_uri":{"type":"string"},"id":{"type":"string"},"patch":{"type":"array","description":"RFC 6902 JSON Patch","items":{"type":"object","properties":{"op":{"type":"string","enum":["add","remove","replace","move","copy","test","$inc","$push"]},"path":{"type":"string"},"from":{"type":"string"},"value":{}},"required":["op","path"]}}},"required":["schema_uri","id","patch"],"additionalProperties":false}`)},
	{Name: ToolQuery, Description: "Query state objects with ASM-QL: {from: schema URI, select?, where? (Mongo-like), order?, limit?, cursor?}, bare or wrapped as {query: {...}}. Returns one page and a cursor for the next.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"from":{"type":"string","description":"the schema URI"},"select":{"type":"array","items":{"type":"string"}},"where":{"type":"object"},"order":{"type":"array","items":{"type":"object","properties":{"field":{"type":"string"},"direction":{"type":"string","enum":["asc","desc"]}},"required":["field"]}},"limit":{"type":"integer","minimum":0},"cursor":{"type":"string"},"query":{"type":"object","description":"the same AST, wrapped (NIP-8's form); alone, in place of the other keys"}},"additionalProperties":false}`)},
	{Name: ToolGet, Description: "Read one state object by id.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"schema_uri":{"type":"string"},"id":{"type":"string"}},"required":["schema_uri","id"],"additionalProperties":false}`)},
	{Name: ToolDelete, Description: "Delete a state object: mode \"tombstone\" (default; history stays) or \"hard\" (the object and its history go).",
		Parameters: json.RawMessage(`{"type":"object","properties":{"schema_uri":{"type":"string"},"id":{"type":"string"},"mode":{"type":"string","enum":["tombstone","soft","hard"]}},"required":["schema_uri","id"],"additionalProperties":false}`)},
	{Name: ToolHistory, Description: "Read a state object's op log: its create marker, changes and tombstone, oldest first.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"schema_uri":{"type":"string"},"id":{"type":"string"}},"required":["schema_uri","id"],"additionalProperties":false}`)},
}

// ToolDefs returns the state.* built-ins as tools (fresh copies: callers
// may keep or change them).
func ToolDefs() []capabilities.ToolDef {
	out := make([]capabilities.ToolDef, len(toolDefs))
	for i, t := range toolDefs {
		t.Parameters = bytes.Clone(t.Parameters)
		out[i] = t
	}
	return out
}

// IsTool reports whether name is a state.* built-in.
func IsTool(name string) bool {
	for _, t := range toolDefs {
		if t.Name == name {
			return true
		}
	}
	return false
}

// docArgs are the arguments of the tools that name one document.
type docArgs struct {
	SchemaURI string          `json:"schema_uri"`
	ID        string          `json:"id"`
	Object    json.RawMessage `json:"object"` // state.create
	Patch     json.RawMessage `json:"patch"`  // state.update
	Mode      string          `json:"mode"`   // state.delete
}

// CallTool runs one state.* tool call as c with JSON arguments and returns
// the JSON result: the Document (create, update, get), the QueryResult
// (query), {"id","deleted","mode"} (delete) or {"entries": [...]}
// (history). state.query's arguments are the ASM-QL query itself.
//
// Errors are *capabilities.Error: PERMISSION_DENIED, NOT_FOUND and
// INVALID_INPUT as the runtime says; CONFLICT and TOO_LARGE become
// INVALID_INPUT (the caller must change its input), with the runtime's code
// kept at the head of the message; TIMEOUT stays; INTERNAL becomes
// EXECUTION_FAILED. An unknown tool name is NOT_FOUND. Context
// cancellation passes through.
func (r *Runtime) CallTool(ctx context.Context, c Caller, name string, args json.RawMessage) (json.RawMessage, error) {
	out, err := r.callTool(ctx, c, name, args)
	if err != nil {
		return nil, toolError(err)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, capabilities.Errorf(capabilities.CodeExecutionFailed, "encode result of %s", name)
	}
	return b, nil
}

func (r *Runtime) callTool(ctx context.Context, c Caller, name string, args json.RawMessage) (any, error) {
	if name == ToolQuery {
		return r.Query(ctx, c, args)
	}
	if !IsTool(name) {
		return nil, capabilities.Errorf(capabilities.CodeNotFound, "no state tool %q", name)
	}
	var a docArgs
	if err := decodeArgs(args, &a); err != nil {
		return nil, capabilities.Errorf(capabilities.CodeInvalidInput, "%s arguments: %v", name, err)
	}
	if err := a.check(name); err != nil {
		return nil, err
	}
	return r.callDoc(ctx, c, name, a)
}

// callDoc runs the tools that name one document.
func (r *Runtime) callDoc(ctx context.Context, c Caller, name string, a docArgs) (any, error) {
	switch name {
	case ToolCreate:
		return r.Create(ctx, c, a.SchemaURI, a.Object)
	case ToolUpdate:
		return r.Update(ctx, c, a.SchemaURI, a.ID, a.Patch)
	case ToolGet:
		return r.Get(ctx, c, a.SchemaURI, a.ID)
	case ToolDelete:
		if err := r.Delete(ctx, c, a.SchemaURI, a.ID, a.Mode); err != nil {
			return nil, err
		}
		mode := a.Mode
		if mode != DeleteHard {
			mode = DeleteTombstone
		}
		return map[string]any{"id": a.ID, "deleted": true, "mode": mode}, nil
	}
	envs, err := r.History(ctx, c, a.SchemaURI, a.ID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"entries": envs}, nil
}

// decodeArgs reads a JSON object strictly (unknown fields refused).
func decodeArgs(args json.RawMessage, v any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// check refuses missing or misplaced arguments.
func (a docArgs) check(name string) error {
	bad := func(format string, args ...any) error {
		return capabilities.Errorf(capabilities.CodeInvalidInput, "%s: %s", name, fmt.Sprintf(format, args...))
	}
	switch {
	case a.SchemaURI == "":
		return bad("schema_uri is required")
	case name == ToolCreate && len(a.Object) == 0:
		return bad("object is required")
	case name != ToolCreate && a.ID == "":
		return bad("id is required")
	case name == ToolUpdate && len(a.Patch) == 0:
		return bad("patch is required (a JSON Patch array)")
	case name != ToolCreate && len(a.Object) > 0, name != ToolUpdate && len(a.Patch) > 0, name != ToolDelete && a.Mode != "":
		return bad("unexpected argument (see the tool's parameters)")
	}
	return nil
}

// toolError maps the runtime's coded errors to CAP codes (see CallTool).
func toolError(err error) error {
	var ce *capabilities.Error
	if errors.As(err, &ce) || errors.Is(err, context.Canceled) {
		return err
	}
	var e *Error
	if !errors.As(err, &e) {
		return &capabilities.Error{Code: capabilities.CodeExecutionFailed, Message: "state tool failed", Err: err}
	}
	switch e.Code {
	case CodePermissionDenied, CodeNotFound, CodeInvalidInput, CodeTimeout:
		return &capabilities.Error{Code: e.Code, Message: e.Msg, Err: err}
	case CodeConflict, CodeTooLarge:
		return &capabilities.Error{Code: capabilities.CodeInvalidInput, Message: e.Error(), Err: err}
	}
	return &capabilities.Error{Code: capabilities.CodeExecutionFailed, Message: "state store failure", Err: err}
}
