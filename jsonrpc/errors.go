package jsonrpc

import (
	"errors"
	"fmt"
)

// JSON-RPC 2.0 error codes (the spec's "Error object"). Applications use
// codes outside -32768..-32000 or, like the ACP, the server-error range
// -32099..-32000.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// Error is a JSON-RPC error object. Message and Data are shown to the peer:
// never put internal error text in them.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("jsonrpc %d: %s", e.Code, e.Message) }

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Errorf builds an *Error with a formatted message.
func Errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Standard errors, for errors.Is against what a handler or the server
// returned.
var (
	// ErrParse: the body is not valid JSON.
	ErrParse = &Error{Code: CodeParseError, Message: "parse error"}
	// ErrInvalidRequest: valid JSON that is not a JSON-RPC request (or an empty batch).
	ErrInvalidRequest = &Error{Code: CodeInvalidRequest, Message: "invalid request"}
	// ErrMethodNotFound: no handler is registered for the method.
	ErrMethodNotFound = &Error{Code: CodeMethodNotFound, Message: "method not found"}
	// ErrInvalidParams: the params do not fit the method.
	ErrInvalidParams = &Error{Code: CodeInvalidParams, Message: "invalid params"}
	// ErrInternal: the handler failed; the cause is logged, not shown.
	ErrInternal = &Error{Code: CodeInternalError, Message: "internal error"}
)

// InvalidParams builds an InvalidParams error whose message says what is wrong.
func InvalidParams(format string, args ...any) *Error {
	return Errorf(CodeInvalidParams, "invalid params: "+format, args...)
}

// toError turns a handler's error into the error object the peer sees:
// an *Error (wrapped or not) as is, else mapErr's answer, else InternalError.
func toError(err error, mapErr func(error) *Error) *Error {
	var je *Error
	if errors.As(err, &je) {
		return je
	}
	if mapErr != nil {
		if je := mapErr(err); je != nil {
			return je
		}
	}
	return ErrInternal
}

// CodeDoc is one entry of a protocol's table of error codes: every code a
// server of the protocol may answer, with a short name and its meaning
// (docs/JSONRPC.md shows each table; a test fails on a code used twice
// within a protocol).
type CodeDoc struct {
	Code    int
	Name    string
	Meaning string
}

// StandardCodes are JSON-RPC 2.0's own codes: a part of every protocol's
// table.
var StandardCodes = []CodeDoc{
	{CodeParseError, "parse error", "the message is not valid JSON (id null)"},
	{CodeInvalidRequest, "invalid request", "valid JSON that is not a request, an empty or over-long batch, a message or answer over its size bound"},
	{CodeMethodNotFound, "method not found", "no such method"},
	{CodeInvalidParams, "invalid params", "the params do not fit the method"},
	{CodeInternalError, "internal error", "the server failed; the cause is logged, never shown"},
}
