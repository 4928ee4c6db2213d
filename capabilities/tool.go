package capabilities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// ToolDef is one tool as a model (OpenAI function) and CAP (a tool
// capability's manifest) see it. Name may contain dots (state.create): the
// model boundary aliases it.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"` // JSON Schema of the arguments
}

// ToolCaller runs one tool call by name with JSON arguments and returns the
// JSON result. Implementations are safe for concurrent use. A failure that
// the caller should see as a CAP code is returned as *Error (wrapped or
// not); anything else counts as EXECUTION_FAILED.
type ToolCaller interface {
	CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error)
}

// CAP error codes (CAP profile 0.1.0, "Errors").
const (
	CodeNotFound         = "NOT_FOUND"
	CodeInvalidInput     = "INVALID_INPUT"
	CodePermissionDenied = "PERMISSION_DENIED"
	CodeExecutionFailed  = "EXECUTION_FAILED"
	CodeTimeout          = "TIMEOUT"
)

// Error is a coded capability error. Its Message is safe to show to a
// peer or a model; Err (not shown) keeps the internal cause.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Err     error  `json:"-"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Unwrap returns the internal cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same code, so
// errors.Is(err, &Error{Code: CodeTimeout}) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Errorf builds a coded error.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// CodeOf returns err's CAP code: its *Error's code, TIMEOUT for a deadline,
// else EXECUTION_FAILED.
func CodeOf(err error) string {
	var ce *Error
	switch {
	case errors.As(err, &ce):
		return ce.Code
	case errors.Is(err, context.DeadlineExceeded):
		return CodeTimeout
	}
	return CodeExecutionFailed
}
