package acp

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// schemaLine returns the YAML line of the schema value at a JSON pointer
// ("/properties/title/x-crdt"), or the schema's first line when it cannot
// be found. A mapping schema is walked node by node; in a JSON string the
// pointer's keys are searched for in order, which finds the key's line in
// any JSON written one way or another.
func (ps *parser) schemaLine(ptr string) int {
	n := ps.schemaNode
	if n == nil {
		return 0
	}
	if n.Kind == yaml.MappingNode {
		return nodeAt(n, ptr).Line
	}
	first := n.Line
	if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) == 0 {
		return first // a one-line or quoted string: no better line
	}
	first++
	pos := 0
	for _, tok := range pointerTokens(ptr) {
		i := strings.Index(n.Value[pos:], `"`+tok+`"`)
		if i < 0 {
			break
		}
		pos += i
	}
	if n.Style&yaml.LiteralStyle == 0 {
		return first
	}
	return first + strings.Count(n.Value[:pos], "\n")
}

// nodeAt walks a mapping/sequence tree by pointer; it stops at the deepest
// node found.
func nodeAt(n *yaml.Node, ptr string) *yaml.Node {
	for _, tok := range pointerTokens(ptr) {
		next := childNode(n, tok)
		if next == nil {
			return n
		}
		n = next
	}
	return n
}

func childNode(n *yaml.Node, tok string) *yaml.Node {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == tok {
				return n.Content[i+1]
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if itoa(i) == tok {
				return c
			}
		}
	}
	return nil
}

// pointerTokens splits a JSON pointer, unescaping ~1 and ~0; numeric
// tokens (array indexes) are kept for nodeAt and are harmless in a search.
func pointerTokens(ptr string) []string {
	if ptr == "" {
		return nil
	}
	toks := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	for i, t := range toks {
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
