package jsonrpc

import (
	"bytes"
	"encoding/json"
)

// request is one decoded JSON-RPC request. ID is kept raw (string, number
// or null) and echoed as is; hasID tells a notification (no "id" member)
// from a request whose id is null.
type request struct {
	JSONRPC string          `json:"jsonrpc"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
	ID      json.RawMessage `json:"id,omitempty"`
}

// response is one JSON-RPC response; exactly one of Result and Error is set.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
	ID      json.RawMessage `json:"id"`
}

var nullID = json.RawMessage("null")

func errorResponse(id json.RawMessage, e *Error) *response {
	if len(id) == 0 {
		id = nullID
	}
	return &response{JSONRPC: "2.0", Error: e, ID: id}
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
