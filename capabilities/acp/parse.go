package acp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"

	"gopkg.in/yaml.v3"
)

// Parse reads an .acp.yaml file and checks every rule of docs/ACP.md. It
// returns the package, or a *ParseError listing every problem at once, each
// with its YAML line and field path. Parse does not check the signature:
// that is Verify.
func Parse(raw []byte, opts Options) (pkg *Package, err error) {
	defer func() {
		if r := recover(); r != nil { // yaml.v3 must not take the node down
			pkg, err = nil, &ParseError{Problems: []Problem{{Msg: fmt.Sprintf("unreadable YAML: %v", r)}}}
		}
	}()
	root, prob := decodeDoc(raw)
	if prob != nil {
		return nil, &ParseError{Problems: []Problem{*prob}}
	}
	ps := &parser{opts: opts, pkg: &Package{Raw: bytes.Clone(raw)},
		toolLine: map[string]int{}, bindingKeys: map[string]*yaml.Node{}}
	ps.document(root)
	if len(ps.probs) > 0 {
		slices.SortStableFunc(ps.probs, func(a, b Problem) int { return a.Line - b.Line })
		return nil, &ParseError{Problems: ps.probs}
	}
	slices.SortStableFunc(ps.warns, func(a, b Problem) int { return a.Line - b.Line })
	ps.pkg.Warnings = ps.warns
	return ps.pkg, nil
}

// yamlLineRE reads the line out of yaml.v3's messages.
var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// decodeDoc decodes exactly one YAML document whose root is a mapping,
// without anchors or aliases.
func decodeDoc(raw []byte) (*yaml.Node, *Problem) {
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Problem{Msg: "empty file"}
		}
		return nil, yamlProblem(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, &Problem{Line: extra.Line, Msg: "more than one YAML document"}
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, &Problem{Line: 1, Msg: "the file must be a YAML mapping (metadata:, schema:, ...)"}
	}
	if n := findAlias(doc.Content[0]); n != nil {
		return nil, &Problem{Line: n.Line, Msg: "YAML anchors and aliases are not allowed in a package"}
	}
	return doc.Content[0], nil
}

func yamlProblem(err error) *Problem {
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Problem{Line: line, Msg: "not YAML: " + m[2]}
	}
	return &Problem{Msg: "not YAML: " + err.Error()}
}

// findAlias returns the first node that is or defines an alias.
func findAlias(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode || n.Anchor != "" || n.Tag == "!!merge" {
		return n
	}
	for _, c := range n.Content {
		if a := findAlias(c); a != nil {
			return a
		}
	}
	return nil
}

// parser collects problems while it fills a Package.
type parser struct {
	opts  Options
	pkg   *Package
	probs []Problem
	warns []Problem // accepted, but worth saying (docs/INTEROP.md)

	schemaNode  *yaml.Node            // the schema section's value
	schemaDoc   []byte                // the compiled package schema as JSON ("" if it failed)
	schemaAny   map[string]any        // the same, decoded
	toolLine    map[string]int        // tool name -> line of its name
	bindingKeys map[string]*yaml.Node // tool_bindings key -> its node
	permsLine   int                   // line of permissions.require (or metadata's)
	permsField  string
}

// add records a problem at n's line.
func (ps *parser) add(n *yaml.Node, field, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	ps.probs = append(ps.probs, Problem{Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// warn records a warning at n's line.
func (ps *parser) warn(n *yaml.Node, field, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	ps.warns = append(ps.warns, Problem{Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// document checks the top level and then each section.
func (ps *parser) document(root *yaml.Node) {
	f := ps.fields(root, "", "metadata", "schema", "prompt", "tools", "tool_bindings")
	ps.require(root, f, "", "metadata", "schema")
	ps.metadata(f["metadata"])
	ps.schema(f["schema"])
	if e, ok := f["prompt"]; ok {
		ps.pkg.Prompt, _ = ps.str(e, "prompt")
		ps.lintPrompt(e.val, ps.pkg.Prompt)
	}
	ps.tools(f["tools"])
	ps.bindings(f["tool_bindings"])
	ps.crossCheck()
}
