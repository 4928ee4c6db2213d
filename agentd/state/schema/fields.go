package schema

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/agentnode/agentnode/agentd/state/crdt"
)

// Index bounds: the store creates an expression index for up to
// MaxAutoIndexes top-level scalar properties (by name order) plus every
// property marked "x-index": true, at most MaxIndexes in all.
const (
	MaxAutoIndexes = 8
	MaxIndexes     = 16
	maxIndexDepth  = 4
)

// Index is an expression index over a document path.
type Index struct {
	Path []string
}

// Expr returns the indexed SQL expression, json_extract(doc, '$.a.b'):
// exactly the form ASM-QL compiles a path to, so the planner can use it.
// Path keys are identifiers ([A-Za-z_][A-Za-z0-9_]*), so the literal is safe.
func (i Index) Expr() string {
	return "json_extract(doc, '$." + strings.Join(i.Path, ".") + "')"
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// crdtJSONTypes lists the JSON types a field with the given x-crdt may
// declare (registers hold anything).
var crdtJSONTypes = map[string][]string{
	crdt.TypeRGAText:     {"string"},
	crdt.TypeGrowOnlySet: {"array"},
	crdt.TypeLogRGA:      {"array"},
	crdt.TypeRGAList:     {"array"},
	crdt.TypeCounter:     {"integer", "number"},
	crdt.TypeFlag:        {"boolean"},
	crdt.TypeORMap:       {"object"},
}

// properties reads the top-level properties: x-crdt per field, required,
// the container's collection field and the indexes.
func (s *Schema) properties(doc map[string]any) error {
	props, err := topProps(doc)
	if err != nil {
		return err
	}
	s.Fields, s.Required, s.Props = map[string]string{}, stringList(doc["required"]), sortedKeys(props)
	for _, name := range sortedKeys(props) {
		if err := s.field(name, props[name]); err != nil {
			return err
		}
	}
	if err := noNestedCRDT(doc, ""); err != nil {
		return err
	}
	if err := s.collection(props); err != nil {
		return err
	}
	return s.indexes(props)
}

// HasProp reports whether the schema declares a top-level property.
func (s *Schema) HasProp(name string) bool {
	i := sort.SearchStrings(s.Props, name)
	return i < len(s.Props) && s.Props[i] == name
}

func topProps(doc map[string]any) (map[string]map[string]any, error) {
	out := map[string]map[string]any{}
	raw, ok := doc["properties"]
	if !ok {
		return out, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, invalidf("properties must be an object")
	}
	for k, v := range m {
		if p, ok := v.(map[string]any); ok {
			out[k] = p
		} else {
			out[k] = map[string]any{} // boolean schema
		}
	}
	return out, nil
}

// field checks one top-level property's x-crdt.
func (s *Schema) field(name string, p map[string]any) error {
	raw, ok := p["x-crdt"]
	if !ok {
		return nil
	}
	kw, _ := raw.(string)
	c, err := crdtName(kw)
	if err != nil {
		return fmt.Errorf("properties.%s.x-crdt: %w", name, err)
	}
	if want := crdtJSONTypes[c]; want != nil && !typeFits(p["type"], want) {
		return invalidf("properties.%s: x-crdt %s needs type %v", name, kw, want)
	}
	s.Fields[name] = c
	return nil
}

// typeFits reports whether a declared "type" (absent, a string or a list)
// allows one of want.
func typeFits(declared any, want []string) bool {
	if declared == nil {
		return true
	}
	for _, t := range typeList(declared) {
		if slices.Contains(want, t) {
			return true
		}
	}
	return false
}

func typeList(declared any) []string {
	if s, ok := declared.(string); ok {
		return []string{s}
	}
	return stringList(declared)
}

// noNestedCRDT refuses x-crdt anywhere but on top-level properties: nested
// values are merged by their top-level field's CRDT.
func noNestedCRDT(node any, path string) error {
	m, ok := node.(map[string]any)
	if !ok {
		if a, ok := node.([]any); ok {
			for i, v := range a {
				if err := noNestedCRDT(v, fmt.Sprintf("%s/%d", path, i)); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for k, v := range m {
		switch {
		case k == "x-crdt" && !isTopProp(path):
			return invalidf("%s: x-crdt is only supported on top-level properties", orRoot(path))
		case k == "const" || k == "enum" || k == "default" || k == "examples" || k == "x-asm":
			continue
		}
		if err := noNestedCRDT(v, path+"/"+k); err != nil {
			return err
		}
	}
	return nil
}

func isTopProp(path string) bool {
	rest, ok := strings.CutPrefix(path, "/properties/")
	return ok && !strings.Contains(rest, "/")
}

func orRoot(path string) string {
	if path == "" {
		return "/"
	}
	return path
}

// collection finds the field holding the entries of a map, list or log
// container: the property whose x-crdt is the container's CRDT, else the
// only property of the right JSON type. A map container without one is a
// map at the root.
func (s *Schema) collection(props map[string]map[string]any) error {
	if s.Container == crdt.ContainerObject {
		return nil
	}
	cands := s.collectionCandidates(props)
	switch {
	case len(cands) == 1:
		s.Collection = cands[0]
		s.Fields[s.Collection] = s.CRDT
		return nil
	case len(cands) == 0 && s.Container == crdt.ContainerMap:
		return nil
	case len(cands) == 0:
		return invalidf("%s: a %s container needs an array property for its entries", s.URI, s.Container)
	}
	return invalidf("%s: %s container: several candidate properties %v; mark one with x-crdt: %s", s.URI, s.Container, cands, s.CRDT)
}

func (s *Schema) collectionCandidates(props map[string]map[string]any) []string {
	var marked, typed []string
	jsonType := "array"
	if s.Container == crdt.ContainerMap {
		jsonType = "object"
	}
	for _, name := range sortedKeys(props) {
		switch c, has := s.Fields[name]; {
		case c == s.CRDT:
			marked = append(marked, name)
		case !has && typeFits(props[name]["type"], []string{jsonType}) && props[name]["type"] != nil && isCollectionShape(props[name], jsonType):
			typed = append(typed, name)
		}
	}
	if len(marked) > 0 {
		return marked
	}
	return typed
}

// isCollectionShape: for maps, an object property with additionalProperties
// (or no fixed properties); arrays always qualify.
func isCollectionShape(p map[string]any, jsonType string) bool {
	if jsonType == "array" {
		return true
	}
	_, addl := p["additionalProperties"]
	_, fixed := p["properties"]
	return addl || !fixed
}

// indexes picks the auto-indexed top-level scalars and the x-index paths.
func (s *Schema) indexes(props map[string]map[string]any) error {
	marked, err := markedIndexes(props, nil)
	if err != nil {
		return err
	}
	if len(marked) > MaxIndexes {
		return invalidf("%s: %d x-index properties (at most %d)", s.URI, len(marked), MaxIndexes)
	}
	seen := map[string]bool{}
	add := func(ix Index) {
		if key := strings.Join(ix.Path, "."); !seen[key] && len(s.Indexes) < MaxIndexes {
			seen[key] = true
			s.Indexes = append(s.Indexes, ix)
		}
	}
	for _, ix := range marked {
		add(ix)
	}
	for _, ix := range s.autoIndexes(props) {
		add(ix)
	}
	return nil
}

func (s *Schema) autoIndexes(props map[string]map[string]any) []Index {
	var out []Index
	for _, name := range sortedKeys(props) {
		if len(out) == MaxAutoIndexes {
			break
		}
		scalar := typeFits(props[name]["type"], []string{"string", "number", "integer", "boolean"})
		if props[name]["type"] != nil && scalar && identRE.MatchString(name) && s.Fields[name] != crdt.TypeRGAText {
			out = append(out, Index{Path: []string{name}})
		}
	}
	return out
}

// markedIndexes walks properties (through nested "properties" only) for
// "x-index": true.
func markedIndexes(props map[string]map[string]any, prefix []string) ([]Index, error) {
	var out []Index
	for _, name := range sortedKeys(props) {
		p, path := props[name], append(slices.Clone(prefix), name)
		if v, ok := p["x-index"]; ok {
			if b, isBool := v.(bool); !isBool || !identRE.MatchString(name) {
				return nil, invalidf("properties.%s: x-index must be true or false on an identifier-named property", strings.Join(path, "."))
			} else if b {
				out = append(out, Index{Path: path})
			}
		}
		sub, err := topProps(p)
		if err != nil || len(sub) == 0 || len(path) >= maxIndexDepth {
			continue
		}
		more, err := markedIndexes(sub, path)
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
	}
	return out, nil
}

func stringList(v any) []string {
	a, _ := v.([]any)
	out := make([]string, 0, len(a))
	for _, x := range a {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
