package acp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

// schema reads the schema section (a string holding JSON, or a mapping),
// checks its $schema, $id and x-crdt names, compiles it as JSON Schema
// 2020-12 under a derived id, and runs Options.CheckSchema.
func (ps *parser) schema(e entry) {
	if e.val == nil {
		return
	}
	ps.schemaNode = e.val
	raw, line, ok := ps.schemaJSON(e)
	if !ok {
		return
	}
	doc, ok := ps.schemaObject(raw, line)
	if !ok {
		return
	}
	if !ps.schemaRules(doc, line) {
		return
	}
	if err := compileSchema(raw); err != nil {
		ptr, msg := compileProblem(err)
		ps.problem(ps.schemaLine(ptr), "schema", "does not compile as JSON Schema 2020-12: %s", msg)
		return
	}
	ps.pkg.Schema, ps.schemaDoc, ps.schemaAny = raw, raw, doc
	if ps.opts.CheckSchema != nil {
		if err := ps.opts.CheckSchema(ps.pkg.schemaURI, bytes.Clone(raw)); err != nil {
			ps.problem(line, "schema", "%s", err)
		}
	}
}

// problem records a problem at a line number.
func (ps *parser) problem(line int, field, format string, args ...any) {
	ps.probs = append(ps.probs, Problem{Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// schemaJSON returns the schema as compact JSON and the line it starts on.
func (ps *parser) schemaJSON(e entry) (json.RawMessage, int, bool) {
	switch {
	case e.val.Kind == yaml.ScalarNode && e.val.Tag == "!!str":
		return ps.schemaText(e.val)
	case e.val.Kind == yaml.MappingNode:
		v, err := toAny(e.val)
		if err != nil {
			ps.add(e.val, "schema", "%s", err)
			return nil, 0, false
		}
		b, err := json.Marshal(v)
		if err != nil {
			ps.add(e.val, "schema", "not JSON: %s", err)
			return nil, 0, false
		}
		return b, e.val.Line, true
	}
	ps.add(e.val, "schema", "must be a string holding JSON, or a mapping")
	return nil, 0, false
}

// schemaText compacts the JSON of a string schema; a syntax error is
// reported on its own line of a block scalar.
func (ps *parser) schemaText(n *yaml.Node) (json.RawMessage, int, bool) {
	first := n.Line
	if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		first++ // the text starts below "schema: |"
	}
	var buf bytes.Buffer
	err := json.Unmarshal([]byte(n.Value), new(json.RawMessage)) // its SyntaxError has the offset
	if err == nil {
		err = json.Compact(&buf, []byte(n.Value))
	}
	if err != nil {
		line := first
		var se *json.SyntaxError
		if errors.As(err, &se) && n.Style&yaml.LiteralStyle != 0 {
			line += strings.Count(n.Value[:min(int(se.Offset), len(n.Value))], "\n")
		}
		ps.problem(line, "schema", "not JSON: %s", err)
		return nil, 0, false
	}
	return buf.Bytes(), first, true
}

// schemaObject decodes the schema and requires an object.
func (ps *parser) schemaObject(raw json.RawMessage, line int) (map[string]any, bool) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		ps.problem(line, "schema", "not JSON: %s", err)
		return nil, false
	}
	doc, ok := v.(map[string]any)
	if !ok {
		ps.problem(line, "schema", "must be a JSON object")
	}
	return doc, ok
}

// schemaRules checks $schema, $id and the x-crdt names.
func (ps *parser) schemaRules(doc map[string]any, line int) bool {
	n := len(ps.probs)
	if s, ok := doc["$schema"]; ok && s != Draft202012 {
		ps.problem(ps.schemaLine("/$schema"), "schema.$schema", "must be %q (JSON Schema 2020-12)", Draft202012)
	}
	id, _ := doc["$id"].(string)
	switch {
	case doc["$id"] == nil:
		ps.problem(line, "schema.$id", "required (the schema URI, e.g. did:nuwa:state:note#v1)")
	case !schemaURIRE.MatchString(id):
		ps.problem(ps.schemaLine("/$id"), "schema.$id", "%q is not a schema URI (did:nuwa:...#<version>, e.g. did:nuwa:state:note#v1)", doc["$id"])
	default:
		ps.pkg.schemaURI = id
	}
	for _, p := range crdtProblems(doc, "") {
		ps.problem(ps.schemaLine(p.ptr), "schema", "%s: %s", p.ptr, p.msg)
	}
	return len(ps.probs) == n
}

// crdtProblem is an unknown CRDT name at a JSON pointer of the schema.
type crdtProblem struct{ ptr, msg string }

// crdtProblems walks a schema and reports every x-crdt (and x-asm.crdt)
// that names no known CRDT. ptr is the JSON pointer of v.
func crdtProblems(v any, ptr string) []crdtProblem {
	var out []crdtProblem
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			switch {
			case k == "x-crdt":
				out = append(out, checkCRDT(c, ptr+"/x-crdt")...)
			case k == "x-asm":
				if m, ok := c.(map[string]any); ok && m["crdt"] != nil {
					out = append(out, checkCRDT(m["crdt"], ptr+"/x-asm/crdt")...)
				}
			case isNameMap(k):
				out = append(out, namedSchemas(c, ptr+"/"+k)...)
			default:
				out = append(out, crdtProblems(c, ptr+"/"+escapePtr(k))...)
			}
		}
	case []any:
		for i, c := range x {
			out = append(out, crdtProblems(c, fmt.Sprintf("%s/%d", ptr, i))...)
		}
	}
	return out
}

// isNameMap: keywords whose keys are names, not keywords.
func isNameMap(k string) bool {
	return k == "properties" || k == "patternProperties" || k == "$defs" || k == "definitions" || k == "dependentSchemas"
}

// namedSchemas walks the values of a name -> schema map.
func namedSchemas(v any, ptr string) []crdtProblem {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	var out []crdtProblem
	for name, s := range m {
		out = append(out, crdtProblems(s, ptr+"/"+escapePtr(name))...)
	}
	return out
}

func checkCRDT(v any, ptr string) []crdtProblem {
	s, _ := v.(string)
	if contains(crdtNames, s) {
		return nil
	}
	return []crdtProblem{{ptr, fmt.Sprintf("unknown CRDT %v (known: %s)", quoteAny(v), strings.Join(crdtNames, ", "))}}
}

func quoteAny(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func escapePtr(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// schemaCompileID is the id a package schema is compiled under: its $id
// (did:nuwa:state:note#v1) carries a fragment, which a 2020-12 $id may not.
func schemaCompileID(raw []byte) string {
	sum := sha256.Sum256(raw)
	return "urn:agentnode:acp:schema:" + hex.EncodeToString(sum[:])
}

// compileSchema compiles the package schema alone.
func compileSchema(raw json.RawMessage) error {
	c := newCompiler()
	id, err := addSchema(c, raw)
	if err != nil {
		return err
	}
	_, err = c.Compile(id)
	return cleanCompileErr(err, id)
}

// addSchema adds the package schema to c under its derived id.
func addSchema(c *jsonschema.Compiler, raw json.RawMessage) (string, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return "", err
	}
	doc := v.(map[string]any)
	id := schemaCompileID(raw)
	doc["$id"] = id
	return id, c.AddResource(id, doc)
}

func newCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	return c
}

// cleanCompileErr drops the derived ids from jsonschema's message; the
// original stays reachable with errors.As.
func cleanCompileErr(err error, ids ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, id := range ids {
		if id != "" {
			msg = strings.ReplaceAll(msg, id, "")
		}
	}
	return &compileError{msg: msg, err: err}
}

type compileError struct {
	msg string
	err error
}

func (e *compileError) Error() string { return e.msg }
func (e *compileError) Unwrap() error { return e.err }

// noLoader refuses every external $ref: a package must not make the node
// read files or fetch URLs.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external reference %q refused", url)
}
