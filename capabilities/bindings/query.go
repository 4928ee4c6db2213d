package bindings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// queryFromArgs maps a tool call's arguments (a JSON object) to query
// parameters: a string as is; a number as written in the JSON; a boolean
// as true/false; null omitted; an array as the parameter repeated once per
// element (elements mapped the same way, objects and arrays JSON-encoded);
// a nested object JSON-encoded.
func queryFromArgs(args json.RawMessage) (url.Values, error) {
	q := url.Values{}
	if len(bytes.TrimSpace(args)) == 0 || bytes.Equal(bytes.TrimSpace(args), []byte("null")) {
		return q, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil {
		return nil, errors.New("arguments must be a JSON object")
	}
	for k, raw := range obj {
		var arr []json.RawMessage
		if raw = bytes.TrimSpace(raw); len(raw) > 0 && raw[0] == '[' {
			if err := json.Unmarshal(raw, &arr); err != nil {
				return nil, fmt.Errorf("argument %s: %w", k, err)
			}
		} else {
			arr = []json.RawMessage{raw}
		}
		for _, v := range arr {
			if s, ok := scalarString(v); ok {
				q.Add(k, s)
			}
		}
	}
	return q, nil
}

// scalarString renders one JSON value as a query value; ok is false for null.
func scalarString(v json.RawMessage) (s string, ok bool) {
	v = bytes.TrimSpace(v)
	switch {
	case len(v) == 0 || string(v) == "null":
		return "", false
	case v[0] == '"':
		if err := json.Unmarshal(v, &s); err == nil {
			return s, true
		}
	case v[0] == '{' || v[0] == '[':
		var b bytes.Buffer
		if err := json.Compact(&b, v); err == nil {
			return b.String(), true
		}
	}
	return strings.TrimSpace(string(v)), true
}
