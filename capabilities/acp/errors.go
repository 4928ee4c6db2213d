package acp

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors.
var (
	// ErrInvalid is wrapped by every *ParseError: the package breaks a rule.
	ErrInvalid = errors.New("acp: invalid package")
	// ErrUnsigned: the package has no metadata.signature.
	ErrUnsigned = errors.New("acp: package is not signed")
	// ErrBadSignature: metadata.signature is malformed or does not verify
	// (the file was changed after signing, or signed by another key).
	ErrBadSignature = errors.New("acp: bad signature")
	// ErrBadCapURI: not did:nuwa:cap:<name>[@<semver>].
	ErrBadCapURI = errors.New("acp: not a capability URI")
	// ErrEventMismatch: a kind-30199 event's tags disagree with its content,
	// or its signed file names another author.
	ErrEventMismatch = errors.New("acp: event does not match its package")
)

// Problem is one broken rule: the YAML line (1-based; 0 when the file could
// not be read that far), the field path (metadata.id, tools[2].function.name,
// tool_bindings.fetch) and what is wrong.
type Problem struct {
	Line  int
	Field string
	Msg   string
}

// String renders `line 3: metadata.id: <msg>`.
func (p Problem) String() string {
	var b strings.Builder
	if p.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", p.Line)
	}
	if p.Field != "" {
		b.WriteString(p.Field + ": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// ParseError lists every problem Parse found, in file order.
type ParseError struct {
	Problems []Problem
}

// Error lists the problems one per line.
func (e *ParseError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns ErrInvalid, for errors.Is.
func (e *ParseError) Unwrap() error { return ErrInvalid }

// Has reports whether some problem is at line (0 = any line) and field
// and its message contains msg.
func (e *ParseError) Has(line int, field, msg string) bool {
	for _, p := range e.Problems {
		if (line == 0 || p.Line == line) && p.Field == field && strings.Contains(p.Msg, msg) {
			return true
		}
	}
	return false
}
