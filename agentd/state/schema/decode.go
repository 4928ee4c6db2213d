package schema

import (
	"encoding/json"
	"unicode/utf8"
)

// DecodeValid decodes raw as encoding/json with UseNumber would (objects
// map[string]any, arrays []any, numbers json.Number, the last of duplicate
// keys), and reports false when raw is not one valid JSON value: callers
// then decode with encoding/json for its error. It validates first
// (json.Valid, which allocates nothing) and then walks the bytes knowing
// they are valid, copying each string once: a json.Decoder reading a large
// value grows its buffer by doubling and unquotes through a second copy,
// ≈ 5 bytes allocated per byte decoded; this is ≈ 1.
func DecodeValid(raw []byte) (any, bool) {
	if !json.Valid(raw) {
		return nil, false
	}
	v, _, ok := walk(raw, skipSpace(raw, 0))
	return v, ok
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// walk decodes the valid value starting at b[i] and returns the index
// after it.
func walk(b []byte, i int) (any, int, bool) {
	switch b[i] {
	case '{':
		return walkObject(b, i)
	case '[':
		return walkArray(b, i)
	case '"':
		return walkString(b, i)
	case 't':
		return true, i + 4, true
	case 'f':
		return false, i + 5, true
	case 'n':
		return nil, i + 4, true
	}
	j := i
	for j < len(b) && (b[j] >= '0' && b[j] <= '9' || b[j] == '-' || b[j] == '+' || b[j] == '.' || b[j] == 'e' || b[j] == 'E') {
		j++
	}
	return json.Number(b[i:j]), j, true
}

func walkObject(b []byte, i int) (any, int, bool) {
	out := map[string]any{}
	i = skipSpace(b, i+1)
	if b[i] == '}' {
		return out, i + 1, true
	}
	for {
		k, j, ok := walkString(b, i)
		if !ok {
			return nil, 0, false
		}
		i = skipSpace(b, skipSpace(b, j)+1) // past ':'
		v, j, ok := walk(b, i)
		if !ok {
			return nil, 0, false
		}
		out[k.(string)] = v
		i = skipSpace(b, j)
		if b[i] == '}' {
			return out, i + 1, true
		}
		i = skipSpace(b, i+1) // past ','
	}
}

func walkArray(b []byte, i int) (any, int, bool) {
	out := []any{}
	i = skipSpace(b, i+1)
	if b[i] == ']' {
		return out, i + 1, true
	}
	for {
		v, j, ok := walk(b, i)
		if !ok {
			return nil, 0, false
		}
		out = append(out, v)
		i = skipSpace(b, j)
		if b[i] == ']' {
			return out, i + 1, true
		}
		i = skipSpace(b, i+1)
	}
}

// walkString decodes the string literal at b[i] (a '"'): its bytes as they
// are when it has no escape and is valid UTF-8, else through
// encoding/json (escapes, invalid bytes as U+FFFD).
func walkString(b []byte, i int) (any, int, bool) {
	plain := true
	j := i + 1
	for ; b[j] != '"'; j++ {
		if b[j] == '\\' {
			plain = false
			j++
		}
	}
	if lit := b[i+1 : j]; plain && utf8.Valid(lit) {
		return string(lit), j + 1, true
	}
	var s string
	if err := json.Unmarshal(b[i:j+1], &s); err != nil {
		return nil, 0, false
	}
	return s, j + 1, true
}
