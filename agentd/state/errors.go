package state

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentnode/agentnode/agentd/state/asmql"
	"github.com/agentnode/agentnode/agentd/state/schema"
	"github.com/agentnode/agentnode/agentd/state/store"
)

// Error codes of the state.* tools. They are stable and safe to show to
// peers and models; Msg never carries internal error text.
const (
	CodePermissionDenied = "PERMISSION_DENIED" // a verb the capability did not declare, another capability's namespace, a document it may read but not write
	CodeNotFound         = "NOT_FOUND"         // no such document (or not visible to the caller), or unknown schema
	CodeInvalidInput     = "INVALID_INPUT"     // malformed input, a patch that cannot apply, a document that fails its schema, a bad query
	CodeConflict         = "CONFLICT"          // create of an existing id, a failed JSON Patch "test", a schema URI taken
	CodeTooLarge         = "TOO_LARGE"         // an object over the size limit without storage.large
	CodeTimeout          = "TIMEOUT"           // a query ran out of time
	CodeInternal         = "INTERNAL"          // the store failed; details are logged, not returned
)

// Sentinel errors: errors.Is(err, ErrNotFound) holds for every *Error with
// code NOT_FOUND.
var (
	ErrPermissionDenied = &Error{Code: CodePermissionDenied}
	ErrNotFound         = &Error{Code: CodeNotFound}
	ErrInvalidInput     = &Error{Code: CodeInvalidInput}
	ErrConflict         = &Error{Code: CodeConflict}
	ErrTooLarge         = &Error{Code: CodeTooLarge}
	ErrTimeout          = &Error{Code: CodeTimeout}
	ErrInternal         = &Error{Code: CodeInternal}
)

// Error is a coded state.* error.
type Error struct {
	Code string
	Msg  string
	err  error // cause, for errors.Is/As; never rendered
}

// Error renders "CODE: msg".
func (e *Error) Error() string {
	if e.Msg == "" {
		return e.Code
	}
	return e.Code + ": " + e.Msg
}

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.err }

func newError(code, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// coded maps errors from the layers below to coded errors. Context
// cancellation passes through unchanged.
func coded(err error) error {
	var e *Error
	var qe *asmql.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &e):
		return e
	case errors.As(err, &qe) && qe.Code == asmql.CodeTimeout:
		return &Error{Code: CodeTimeout, Msg: "query exceeded its time limit", err: err}
	case errors.As(err, &qe):
		return &Error{Code: CodeInvalidInput, Msg: qe.Error(), err: err}
	case errors.Is(err, context.Canceled):
		return err
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Code: CodeTimeout, Msg: "deadline exceeded", err: err}
	case errors.Is(err, store.ErrNotFound):
		return &Error{Code: CodeNotFound, Msg: "no such document", err: err}
	case errors.Is(err, schema.ErrInvalidSchema), errors.Is(err, schema.ErrInvalidDocument):
		return &Error{Code: CodeInvalidInput, Msg: err.Error(), err: err}
	case errors.Is(err, schema.ErrDuplicate):
		return &Error{Code: CodeConflict, Msg: err.Error(), err: err}
	}
	return &Error{Code: CodeInternal, Msg: "state store failure", err: err}
}
