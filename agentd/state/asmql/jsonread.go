package asmql

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
)

// object is a decoded JSON object that keeps its key order, so that
// implicit ANDs compile in the order they were written.
type object struct {
	keys []string
	vals []any
}

// get returns the value of key k.
func (o *object) get(k string) (any, bool) {
	for i, key := range o.keys {
		if key == k {
			return o.vals[i], true
		}
	}
	return nil, false
}

// reader decodes JSON into nil, bool, string, int64, float64, []any and
// *object. It refuses duplicate keys and nesting deeper than maxDepth while
// reading, so hostile input can neither overflow the stack nor hide a key.
type reader struct {
	dec      *json.Decoder
	maxDepth int
}

// decodeObject decodes data, which must hold exactly one JSON object.
func decodeObject(data []byte, maxDepth int) (*object, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	r := &reader{dec: dec, maxDepth: maxDepth}
	v, err := r.value("", 1)
	if err != nil {
		return nil, err
	}
	o, ok := v.(*object)
	if !ok {
		return nil, invalid("", "a query must be a JSON object")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, invalid("", "trailing data after the query")
	}
	return o, nil
}

// value reads the next value; path is its JSON pointer, depth its nesting.
func (r *reader) value(path string, depth int) (any, error) {
	tok, err := r.dec.Token()
	if err != nil {
		return nil, malformed(path, err)
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth > r.maxDepth {
			return nil, tooComplex(path, "JSON nested deeper than "+strconv.Itoa(r.maxDepth))
		}
		if t == '{' {
			return r.object(path, depth)
		}
		if t == '[' {
			return r.array(path, depth)
		}
		return nil, invalid(path, "malformed JSON")
	case json.Number:
		return number(path, t)
	default:
		return t, nil // nil, bool or string
	}
}

// object reads the members of an object whose '{' was consumed.
func (r *reader) object(path string, depth int) (*object, error) {
	o := &object{}
	for r.dec.More() {
		tok, err := r.dec.Token()
		if err != nil {
			return nil, malformed(path, err)
		}
		key, _ := tok.(string)
		if _, dup := o.get(key); dup {
			return nil, invalid(ptr(path, key), "duplicate key")
		}
		v, err := r.value(ptr(path, key), depth+1)
		if err != nil {
			return nil, err
		}
		o.keys, o.vals = append(o.keys, key), append(o.vals, v)
	}
	return o, r.closing(path)
}

// array reads the elements of an array whose '[' was consumed.
func (r *reader) array(path string, depth int) ([]any, error) {
	a := []any{}
	for r.dec.More() {
		v, err := r.value(ptr(path, strconv.Itoa(len(a))), depth+1)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
	}
	return a, r.closing(path)
}

// closing consumes the '}' or ']' that ends a container.
func (r *reader) closing(path string) error {
	if _, err := r.dec.Token(); err != nil {
		return malformed(path, err)
	}
	return nil
}

// number converts a JSON number to int64 when it is an integer that fits,
// else to float64.
func number(path string, n json.Number) (any, error) {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, invalid(path, "number out of range")
	}
	return f, nil
}

// malformed reports a JSON syntax error. The decoder's message names only
// the offending character, so it is safe to pass on.
func malformed(path string, err error) *Error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return invalid(path, "malformed JSON: "+se.Error())
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return invalid(path, "malformed JSON: unexpected end of input")
	}
	return invalid(path, "malformed JSON")
}
