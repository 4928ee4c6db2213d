package modelloop

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentnode/agentnode/capabilities"
)

// toolset is a Turn's tools with their parameter schemas compiled (once
// per process, see schemaCache).
type toolset struct {
	byName  map[string]*tool
	allowed func(string) bool
}

type tool struct {
	def       capabilities.ToolDef
	schema    *jsonschema.Schema // nil: no parameters schema, any object passes
	schemaErr error              // the schema did not compile: calls fail
}

func newToolset(defs []capabilities.ToolDef, allowed func(string) bool) *toolset {
	ts := &toolset{byName: make(map[string]*tool, len(defs)), allowed: allowed}
	for _, d := range defs {
		if _, dup := ts.byName[d.Name]; dup {
			continue // the first definition wins, as the model saw it first
		}
		s, err := cachedSchema(d.Parameters)
		ts.byName[d.Name] = &tool{def: d, schema: s, schemaErr: err}
	}
	return ts
}

// compileSchema compiles a tool's parameter schema (2020-12 by default)
// with no loader: a $ref to anything outside the document fails instead
// of reading files or the network.
func compileSchema(params json.RawMessage) (*jsonschema.Schema, error) {
	if p := bytes.TrimSpace(params); len(p) == 0 || string(p) == "null" {
		return nil, nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(params))
	if err != nil {
		return nil, fmt.Errorf("parameters are not JSON: %w", err)
	}
	s, err := compileDoc(doc)
	if err != nil {
		// ACP schemas carry $id values like did:nuwa:state:note#v1 that
		// 2020-12 rejects; they only name the schema, so drop them and retry.
		if s2, err2 := compileDoc(stripIDs(doc)); err2 == nil {
			return s2, nil
		}
	}
	return s, err
}

func compileDoc(doc any) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	const loc = "urn:agentnode:tool-parameters"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	return c.Compile(loc)
}

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, errors.New("modelloop: external schema references are not loaded: " + url)
}

// stripIDs returns doc without any "$id" key, at any depth.
func stripIDs(doc any) any {
	switch v := doc.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			if k != "$id" {
				out[k] = stripIDs(x)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = stripIDs(x)
		}
		return out
	}
	return doc
}

// check decides whether a call may run: it returns the parsed arguments
// as JSON, or a coded error for the model.
func (ts *toolset) check(name, args string) (json.RawMessage, *capabilities.Error) {
	t, ok := ts.byName[name]
	if !ok {
		return nil, capabilities.Errorf(capabilities.CodeNotFound, "no tool named %q is available here", name)
	}
	if ts.allowed != nil && !ts.allowed(name) {
		return nil, capabilities.Errorf(capabilities.CodePermissionDenied, "this tool is not permitted in this conversation")
	}
	if t.schemaErr != nil {
		return nil, capabilities.Errorf(capabilities.CodeExecutionFailed, "this tool has an invalid parameter schema")
	}
	raw := bytes.TrimSpace([]byte(args))
	if len(raw) == 0 {
		raw = []byte("{}") // models often send "" for a tool without arguments
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, capabilities.Errorf(capabilities.CodeInvalidInput, "arguments are not valid JSON: %v", err)
	}
	if t.schema != nil {
		if err := t.schema.Validate(inst); err != nil {
			return nil, capabilities.Errorf(capabilities.CodeInvalidInput, "arguments do not match the parameters schema: %s", validationMessage(err))
		}
	}
	return json.RawMessage(raw), nil
}

// validationMessage flattens a validation error to one line the model can
// act on: "at '/title': missing property; at '/n': want integer".
func validationMessage(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var parts []string
	for _, u := range ve.BasicOutput().Errors {
		if u.Error == nil || u.Error.String() == "" {
			continue
		}
		loc := u.InstanceLocation
		if loc == "" {
			loc = "/"
		}
		parts = append(parts, fmt.Sprintf("at %q: %s", loc, u.Error.String()))
	}
	if len(parts) == 0 {
		return err.Error()
	}
	return strings.Join(parts, "; ")
}
