package jsonrpc

import (
	"bytes"
	"encoding/json"
)

var nullID = json.RawMessage("null")

func errorResponse(id json.RawMessage, e *Error) *Response {
	if len(id) == 0 {
		id = nullID
	}
	return &Response{JSONRPC: "2.0", Error: e, ID: id}
}

// isBatch reports whether body (already known to be valid JSON) is an array.
func isBatch(body []byte) bool {
	t := bytes.TrimLeft(body, " \t\r\n")
	return len(t) > 0 && t[0] == '['
}

// validID reports whether id is a string, a number or null (the spec's
// allowed id types).
func validID(id json.RawMessage) bool {
	if len(id) == 0 {
		return true
	}
	switch id[0] {
	case '"', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return true
	}
	return false
}

// validParams reports whether params is absent, an object or an array.
func validParams(p json.RawMessage) bool {
	t := bytes.TrimLeft(p, " \t\r\n")
	return len(t) == 0 || t[0] == '{' || t[0] == '['
}
