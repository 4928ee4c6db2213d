package acp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

// schemaRef is the reference a tool parameter uses for the package schema.
const schemaRef = "#/schema"

// emptyParams stands in for a tool without parameters.
var emptyParams = json.RawMessage(`{"type":"object","properties":{}}`)

// tools checks the tools section: OpenAI function definitions with unique
// names and parameters that compile as JSON Schema.
func (ps *parser) tools(e entry) {
	ps.pkg.params = map[string]json.RawMessage{}
	if e.val == nil {
		return
	}
	if e.val.Kind != yaml.SequenceNode {
		ps.add(e.val, "tools", "must be a list of {type: function, function: {...}}")
		return
	}
	for i, item := range e.val.Content {
		ps.tool(item, fmt.Sprintf("tools[%d]", i))
	}
}

func (ps *parser) tool(n *yaml.Node, path string) {
	f := ps.fields(n, path, "type", "function")
	ps.require(n, f, path, "type", "function")
	if x, ok := f["type"]; ok {
		if s, ok := ps.str(x, x.path); ok && s != "function" {
			ps.add(x.val, x.path, `must be "function"`)
		}
	}
	fn, ok := f["function"]
	if !ok {
		return
	}
	t := Tool{Type: "function"}
	if ps.function(fn, &t.Function) {
		ps.pkg.Tools = append(ps.pkg.Tools, t)
	}
}

// function checks one function: name, description, parameters.
func (ps *parser) function(e entry, fn *Function) bool {
	f := ps.fields(e.val, e.path, "name", "description", "parameters", "strict", "output_schema", "outputSchema")
	ps.require(e.val, f, e.path, "name")
	ok := ps.toolName(f, fn)
	if x, has := f["description"]; has {
		fn.Description, _ = ps.str(x, x.path)
	}
	if x, has := f["strict"]; has && x.val.Tag != "!!bool" {
		ps.add(x.val, x.path, "must be true or false")
	}
	fn.OutputSchema = ps.outputSchema(f)
	fn.Parameters = emptyParams
	if x, has := f["parameters"]; has {
		fn.Parameters = ps.parameters(x, fn.Name)
	} else if ok {
		ps.pkg.params[fn.Name] = emptyParams
	}
	return ok && fn.Parameters != nil
}

func (ps *parser) toolName(f map[string]entry, fn *Function) bool {
	x, has := f["name"]
	if !has {
		return false
	}
	name, ok := ps.str(x, x.path)
	switch {
	case !ok:
		return false
	case !toolNameRE.MatchString(name):
		ps.add(x.val, x.path, "%q is not a tool name (1-64 of A-Z a-z 0-9 _ . -)", name)
		return false
	case ps.toolLine[name] != 0:
		ps.add(x.val, x.path, "tool %q is declared twice (first at line %d)", name, ps.toolLine[name])
		return false
	}
	fn.Name, ps.toolLine[name] = name, x.val.Line
	return true
}

// parameters checks a tool's parameters: a JSON Schema of type object that
// compiles, {$ref: "#/schema"} resolving to the package schema. It returns
// them with those references inlined (as Function.Parameters documents).
func (ps *parser) parameters(e entry, name string) json.RawMessage {
	v, err := toAny(e.val)
	if err != nil {
		ps.add(e.val, e.path, "%s", err)
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok || m["type"] != "object" {
		ps.add(e.val, e.path, `must be a JSON Schema with "type": "object"`)
		return nil
	}
	raw, err := json.Marshal(m)
	if err != nil {
		ps.add(e.val, e.path, "not JSON: %s", err)
		return nil
	}
	if usesSchemaRef(m) && ps.schemaDoc == nil {
		return nil // the schema's own problems are reported
	}
	if err := compileParams(raw, ps.schemaDoc); err != nil {
		ptr, msg := compileProblem(err)
		ps.add(nodeAt(e.val, ptr), e.path, "does not compile as JSON Schema 2020-12: %s", msg)
		return nil
	}
	ps.pkg.params[name] = ps.inline(m)
	return ps.pkg.params[name]
}

// outputSchema checks function.output_schema (or outputSchema): a JSON
// Schema object that compiles, {$ref: "#/schema"} resolving to the package
// schema. It returns it with those references inlined.
func (ps *parser) outputSchema(f map[string]entry) json.RawMessage {
	x, has := f["output_schema"]
	if y, also := f["outputSchema"]; also {
		if has {
			ps.add(y.key, y.path, "give output_schema or outputSchema, not both")
			return nil
		}
		x, has = y, true
	}
	if !has {
		return nil
	}
	v, err := toAny(x.val)
	m, ok := v.(map[string]any)
	if err != nil || !ok {
		ps.add(x.val, x.path, "must be a JSON Schema object")
		return nil
	}
	raw, _ := json.Marshal(m)
	if usesSchemaRef(m) && ps.schemaDoc == nil {
		return nil
	}
	if err := compileParams(raw, ps.schemaDoc); err != nil {
		ptr, msg := compileProblem(err)
		ps.add(nodeAt(x.val, ptr), x.path, "does not compile as JSON Schema 2020-12: %s", msg)
		return nil
	}
	return ps.inline(m)
}

// usesSchemaRef reports whether any $ref in v points into #/schema.
func usesSchemaRef(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		if r, ok := x["$ref"].(string); ok && isSchemaRef(r) {
			return true
		}
		for _, c := range x {
			if usesSchemaRef(c) {
				return true
			}
		}
	case []any:
		for _, c := range x {
			if usesSchemaRef(c) {
				return true
			}
		}
	}
	return false
}

func isSchemaRef(r string) bool { return r == schemaRef || strings.HasPrefix(r, schemaRef+"/") }

// compileParams compiles parameters with "#/schema..." pointed at the
// package schema's derived id.
func compileParams(raw json.RawMessage, schemaDoc json.RawMessage) error {
	c := newCompiler()
	schemaID := ""
	if schemaDoc != nil {
		var err error
		if schemaID, err = addSchema(c, schemaDoc); err != nil {
			return err
		}
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	v = rewriteRefs(v, func(r string) any { return schemaID + "#" + strings.TrimPrefix(r, schemaRef) })
	const id = "urn:agentnode:acp:tool"
	v.(map[string]any)["$id"] = id
	if err := c.AddResource(id, v); err != nil {
		return cleanCompileErr(err, id, schemaID)
	}
	_, err = c.Compile(id)
	return cleanCompileErr(err, id, schemaID)
}

// rewriteRefs returns v with every "#/schema..." $ref replaced by repl's
// value for it.
func rewriteRefs(v any, repl func(ref string) any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, c := range x {
			out[k] = rewriteRefs(c, repl)
		}
		if r, ok := x["$ref"].(string); ok && isSchemaRef(r) {
			out["$ref"] = repl(r)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = rewriteRefs(c, repl)
		}
		return out
	}
	return v
}

// inline returns params with each {$ref: "#/schema..."} replaced by a copy
// of the part of the package schema it names (without $id and $schema);
// keywords beside the $ref are kept and win.
func (ps *parser) inline(params map[string]any) json.RawMessage {
	v := inlineRefs(params, ps.schemaAny)
	b, _ := json.Marshal(v)
	return b
}

func inlineRefs(v any, schema map[string]any) any {
	switch x := v.(type) {
	case map[string]any:
		r, _ := x["$ref"].(string)
		if !isSchemaRef(r) {
			out := make(map[string]any, len(x))
			for k, c := range x {
				out[k] = inlineRefs(c, schema)
			}
			return out
		}
		return mergeTarget(x, schema, r)
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = inlineRefs(c, schema)
		}
		return out
	}
	return v
}

// mergeTarget is the schema part r names, plus the keywords beside $ref.
func mergeTarget(x map[string]any, schema map[string]any, r string) map[string]any {
	out := map[string]any{}
	if t, ok := pointer(schema, strings.TrimPrefix(r, schemaRef)).(map[string]any); ok {
		for k, c := range t {
			out[k] = c
		}
	}
	delete(out, "$id")
	delete(out, "$schema")
	for k, c := range x {
		if k != "$ref" {
			out[k] = inlineRefs(c, schema)
		}
	}
	return out
}

// pointer resolves a JSON pointer ("" = the whole document).
func pointer(doc any, ptr string) any {
	if ptr == "" {
		return doc
	}
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := doc.(map[string]any)
		if !ok {
			return nil
		}
		doc = m[tok]
	}
	return doc
}
