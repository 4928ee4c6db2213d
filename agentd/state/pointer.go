package state

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// getAt returns the value at path.
func getAt(doc any, path []string) (any, error) {
	cur := doc
	for i, tok := range path {
		next, err := child(cur, tok)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", pointerString(path[:i+1]), err)
		}
		cur = next
	}
	return cur, nil
}

func child(node any, tok string) (any, error) {
	switch n := node.(type) {
	case map[string]any:
		v, ok := n[tok]
		if !ok {
			return nil, fmt.Errorf("not found")
		}
		return v, nil
	case []any:
		i, err := index(tok, len(n)-1)
		if err != nil {
			return nil, err
		}
		return n[i], nil
	}
	return nil, fmt.Errorf("not a container")
}

// index parses an array index token in [0, max].
func index(tok string, max int) (int, error) {
	if tok == "" || len(tok) > 1 && tok[0] == '0' || strings.TrimLeft(tok, "0123456789") != "" {
		return 0, fmt.Errorf("bad array index %q", tok)
	}
	i, err := strconv.Atoi(tok)
	if err != nil || i > max {
		return 0, fmt.Errorf("array index %s out of range", tok)
	}
	return i, nil
}

// edit walks to path's parent, lets fn change it, and rebuilds the spine.
func edit(doc any, path []string, fn func(parent any, tok string) (any, error)) (any, error) {
	if len(path) == 1 {
		return fn(doc, path[0])
	}
	c, err := child(doc, path[0])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path[0], err)
	}
	nc, err := edit(c, path[1:], fn)
	if err != nil {
		return nil, err
	}
	return setChild(doc, path[0], nc), nil
}

// setChild replaces an existing child (the token was just resolved).
func setChild(node any, tok string, v any) any {
	switch n := node.(type) {
	case map[string]any:
		n[tok] = v
	case []any:
		i, _ := strconv.Atoi(tok)
		n[i] = v
	}
	return node
}

func addAt(doc any, path []string, v any) (any, error) {
	if len(path) == 0 {
		return v, nil
	}
	return edit(doc, path, func(parent any, tok string) (any, error) {
		switch p := parent.(type) {
		case map[string]any:
			p[tok] = v
			return p, nil
		case []any:
			if tok == "-" {
				return append(p, v), nil
			}
			i, err := index(tok, len(p))
			if err != nil {
				return nil, err
			}
			return append(p[:i], append([]any{v}, p[i:]...)...), nil
		}
		return nil, fmt.Errorf("parent of %s is not a container", tok)
	})
}

func removeAt(doc any, path []string) (any, error) {
	if len(path) == 0 {
		return nil, fmt.Errorf("cannot remove the whole document")
	}
	return edit(doc, path, func(parent any, tok string) (any, error) {
		switch p := parent.(type) {
		case map[string]any:
			if _, ok := p[tok]; !ok {
				return nil, fmt.Errorf("%s: not found", tok)
			}
			delete(p, tok)
			return p, nil
		case []any:
			i, err := index(tok, len(p)-1)
			if err != nil {
				return nil, err
			}
			return append(p[:i:i], p[i+1:]...), nil
		}
		return nil, fmt.Errorf("parent of %s is not a container", tok)
	})
}

func replaceAt(doc any, path []string, v any) (any, error) {
	if len(path) == 0 {
		return v, nil
	}
	if _, err := getAt(doc, path); err != nil {
		return nil, err
	}
	return edit(doc, path, func(parent any, tok string) (any, error) {
		return setChild(parent, tok, v), nil
	})
}

func pointerString(path []string) string {
	var b strings.Builder
	for _, p := range path {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(p, "~", "~0"), "/", "~1"))
	}
	if b.Len() == 0 {
		return "/"
	}
	return b.String()
}

// deepCopy copies decoded JSON.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = deepCopy(e)
		}
		return a
	}
	return v
}

// equalJSON compares JSON values; numbers compare by value.
func equalJSON(a, b any) bool {
	a, b = normalize(a), normalize(b)
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if w, ok := y[k]; !ok || !equalJSON(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	case json.Number:
		y, ok := b.(json.Number)
		return ok && numbersEqual(x, y)
	}
	return a == b
}

// normalize turns raw JSON and Go numbers into decoded JSON values.
func normalize(v any) any {
	switch x := v.(type) {
	case json.RawMessage:
		d, err := decodeValue(x)
		if err != nil {
			return nil
		}
		return d
	case int64:
		return json.Number(strconv.FormatInt(x, 10))
	case int:
		return json.Number(strconv.Itoa(x))
	case float64:
		return json.Number(strconv.FormatFloat(x, 'g', -1, 64))
	}
	return v
}

func numbersEqual(a, b json.Number) bool {
	if a == b {
		return true
	}
	x, errX := a.Int64()
	y, errY := b.Int64()
	if errX == nil && errY == nil {
		return x == y
	}
	f, errF := a.Float64()
	g, errG := b.Float64()
	return errF == nil && errG == nil && f == g
}
