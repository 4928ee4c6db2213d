package acp

import (
	"encoding/json"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// entry is one key: value of a mapping.
type entry struct {
	key, val *yaml.Node
	path     string // the field path of the value
}

// join appends key to a field path.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// fields returns a mapping's entries by key. It reports a value that is not
// a mapping, non-string or repeated keys, and keys not in known (nil = any).
func (ps *parser) fields(n *yaml.Node, path string, known ...string) map[string]entry {
	out, _ := ps.fieldsOf(n, path, false, known)
	return out
}

// openFields is fields for a mapping the spec leaves open: keys not in
// known are not problems but warnings, and their values are kept in extra
// (nil when there are none).
func (ps *parser) openFields(n *yaml.Node, path string, known ...string) (map[string]entry, map[string]any) {
	return ps.fieldsOf(n, path, true, known)
}

func (ps *parser) fieldsOf(n *yaml.Node, path string, open bool, known []string) (map[string]entry, map[string]any) {
	out := map[string]entry{}
	var extra map[string]any
	if n == nil {
		return out, nil
	}
	if n.Kind != yaml.MappingNode {
		ps.add(n, path, "must be a mapping")
		return out, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		e := entry{key: k, val: v, path: join(path, k.Value)}
		switch {
		case k.Kind != yaml.ScalarNode:
			ps.add(k, path, "keys must be strings")
		case hasKey(out, k.Value):
			ps.add(k, e.path, "repeated (first at line %d)", out[k.Value].key.Line)
		case extra[k.Value] != nil:
			ps.add(k, e.path, "repeated")
		case known != nil && !contains(known, k.Value) && open:
			extra = ps.keep(extra, e)
		case known != nil && !contains(known, k.Value):
			ps.add(k, e.path, "unknown field (known: %s)", strings.Join(known, ", "))
		default:
			out[k.Value] = e
		}
	}
	return out, extra
}

// keep records an open field's value in extra, with a warning.
func (ps *parser) keep(extra map[string]any, e entry) map[string]any {
	n := len(ps.probs)
	extra = ps.keepQuiet(extra, e)
	if len(ps.probs) == n {
		ps.warn(e.key, e.path, "not read by agentnode (kept as written)")
	}
	return extra
}

// keepQuiet records a field's value in extra.
func (ps *parser) keepQuiet(extra map[string]any, e entry) map[string]any {
	v, err := toAny(e.val)
	if err != nil {
		ps.add(e.val, e.path, "%s", err)
		return extra
	}
	if extra == nil {
		extra = map[string]any{}
	}
	extra[e.key.Value] = v
	if v == nil {
		extra[e.key.Value] = json.RawMessage("null")
	}
	return extra
}

func hasKey(m map[string]entry, k string) bool { _, ok := m[k]; return ok }

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// require reports each name missing from f.
func (ps *parser) require(n *yaml.Node, f map[string]entry, path string, names ...string) {
	if n == nil || n.Kind != yaml.MappingNode {
		return
	}
	for _, name := range names {
		if _, ok := f[name]; !ok {
			ps.add(n, join(path, name), "required")
		}
	}
}

// str returns a string scalar, reporting any other value.
func (ps *parser) str(e entry, path string) (string, bool) {
	if e.val.Kind != yaml.ScalarNode || e.val.Tag != "!!str" {
		ps.add(e.val, path, "must be a string")
		return "", false
	}
	return e.val.Value, true
}

// nonBlank returns a string that is not empty or only white space.
func (ps *parser) nonBlank(e entry, path string) (string, bool) {
	s, ok := ps.str(e, path)
	if ok && strings.TrimSpace(s) == "" {
		ps.add(e.val, path, "must not be empty")
		return "", false
	}
	return s, ok
}

// strList returns a sequence of strings, reporting anything else.
func (ps *parser) strList(e entry, path string) []string {
	if e.val.Kind != yaml.SequenceNode {
		ps.add(e.val, path, "must be a list of strings")
		return nil
	}
	out := []string{}
	for i, item := range e.val.Content {
		if s, ok := ps.str(entry{val: item}, fmt.Sprintf("%s[%d]", path, i)); ok {
			out = append(out, s)
		}
	}
	return out
}

// toAny converts a YAML node to the value JSON would decode to.
func toAny(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: keys must be strings", k.Line)
			}
			if _, dup := m[k.Value]; dup {
				return nil, fmt.Errorf("line %d: key %q repeated", k.Line, k.Value)
			}
			v, err := toAny(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			m[k.Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := toAny(c)
			if err != nil {
				return nil, err
			}
			s = append(s, v)
		}
		return s, nil
	case yaml.ScalarNode:
		return scalarAny(n)
	}
	return nil, fmt.Errorf("line %d: unsupported YAML node", n.Line)
}

// scalarAny decodes a scalar, keeping integers exact.
func scalarAny(n *yaml.Node) (any, error) {
	if n.Tag == "!!int" || n.Tag == "!!float" {
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, fmt.Errorf("line %d: %q is not a number JSON can hold", n.Line, n.Value)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("line %d: %q is not a number JSON can hold", n.Line, n.Value)
		}
		return json.Number(b), nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, fmt.Errorf("line %d: %v", n.Line, err)
	}
	if _, ok := v.(string); !ok && v != nil && n.Tag != "!!bool" {
		return n.Value, nil // timestamps, binary...: keep the text
	}
	return v, nil
}
