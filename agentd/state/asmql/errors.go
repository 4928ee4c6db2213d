package asmql

import (
	"errors"
	"strings"
)

// Error codes. They are stable and safe to show to peers.
const (
	// CodeInvalidQuery: the query is malformed (syntax, unknown key or
	// operator, wrong operand type, bad field path, bad direction, ...).
	CodeInvalidQuery = "INVALID_QUERY"
	// CodeTooComplex: the query exceeds a Limits bound (size, nesting depth,
	// node count, $in list length, select or order entries).
	CodeTooComplex = "QUERY_TOO_COMPLEX"
	// CodeTimeout: execution ran past Limits.Timeout or the caller's deadline.
	CodeTimeout = "QUERY_TIMEOUT"
	// CodeBadCursor: the cursor is not one this package issued for the same
	// query shape (from, where, order) and table.
	CodeBadCursor = "BAD_CURSOR"
)

// Sentinel errors. Coded errors compare by code: errors.Is(err,
// ErrInvalidQuery) holds for every *Error whose Code is INVALID_QUERY.
var (
	ErrInvalidQuery = &Error{Code: CodeInvalidQuery}
	ErrTooComplex   = &Error{Code: CodeTooComplex}
	ErrTimeout      = &Error{Code: CodeTimeout}
	ErrBadCursor    = &Error{Code: CodeBadCursor}

	// ErrBadTarget is returned for a Target the caller built wrongly (empty
	// table name). It is a programming error, not a peer's.
	ErrBadTarget = errors.New("asmql: bad target")
)

// Error is a coded ASM-QL error. Path locates the offending part of the
// query as a JSON pointer ("/where/$and/1/title/$gt"); it is empty when the
// error concerns the whole query. Code, Path and Msg never carry internal
// error text, so Error() may be returned to peers verbatim.
type Error struct {
	Code string
	Path string
	Msg  string
	err  error // cause, for errors.Is/As (e.g. context.DeadlineExceeded)
}

// Error renders "CODE at /path: msg".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Code)
	if e.Path != "" {
		b.WriteString(" at ")
		b.WriteString(e.Path)
	}
	if e.Msg != "" {
		b.WriteString(": ")
		b.WriteString(e.Msg)
	}
	return b.String()
}

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Unwrap returns the cause, if any.
func (e *Error) Unwrap() error { return e.err }

func invalid(path, msg string) *Error {
	return &Error{Code: CodeInvalidQuery, Path: path, Msg: msg}
}

func tooComplex(path, msg string) *Error {
	return &Error{Code: CodeTooComplex, Path: path, Msg: msg}
}

func badCursor(msg string) *Error {
	return &Error{Code: CodeBadCursor, Path: "/cursor", Msg: msg}
}

// ptr appends a JSON-pointer reference token to path.
func ptr(path, token string) string {
	token = strings.ReplaceAll(token, "~", "~0")
	token = strings.ReplaceAll(token, "/", "~1")
	return path + "/" + token
}
