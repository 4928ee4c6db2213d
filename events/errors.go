package events

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every *ValidationError wraps one of them, so callers can
// branch with errors.Is(err, events.ErrBadID) instead of matching text.
var (
	// ErrNilEvent is returned when a nil *nostr.Event is validated or parsed.
	ErrNilEvent = errors.New("nil event")
	// ErrWrongKind: a parser was handed an event of another kind.
	ErrWrongKind = errors.New("wrong kind")
	// ErrMissingTag: a required tag (or a required tag-or-content pair) is absent.
	ErrMissingTag = errors.New("required tag missing")
	// ErrBadTag: a tag is malformed as a whole (empty name, repeated where one is allowed).
	ErrBadTag = errors.New("malformed tag")
	// ErrBadID: an event id is not 64 lower-case hex characters.
	ErrBadID = errors.New("not a 64-hex event id")
	// ErrBadPubKey: a public key is not 64 lower-case hex characters
	// (or, for ParsePubKey, not an npub/nprofile either).
	ErrBadPubKey = errors.New("not a 64-hex pubkey")
	// ErrBadValue: a tag value is empty or not of the form its tag requires.
	ErrBadValue = errors.New("bad tag value")
	// ErrBadContent: the event content is not of the form its kind requires.
	ErrBadContent = errors.New("bad content")
	// ErrBadSecretKey: not an nsec or a 64-hex secp256k1 secret key.
	ErrBadSecretKey = errors.New("not a secret key")
	// ErrBadRef: not an nevent, note, naddr or 64-hex event id.
	ErrBadRef = errors.New("not an event reference")
)

// Refusal reasons. They are part of the protocol surface (the relay sends
// them to clients after "invalid: "), so they are stable and documented in
// docs/KINDS.md.
const (
	reasonEmptyTagName   = "empty tag name"
	reasonEmptyValue     = "empty value"
	reasonImage          = "not an image URI a client can render safely (absolute; not javascript:, vbscript:, file: or a non-image or SVG data:)"
	reasonTitleOrContent = "needs a title or content"
	reasonTitleOrSlug    = `needs a title or a "d" (its name)`
	reasonNudgeEmpty     = "needs a title, content or a tool tag"
	reasonKindNumber     = "not a kind number"
	reasonLessonRootKind = `must be 4129 when parent kind "k" is 4129`
	reasonMissingRoot    = "missing root event reference"
	reasonJSONObject     = "not a JSON object"
)

// ValidationError names the kind, the offending tag (or "content" / "kind"),
// and the reason an event was refused. It wraps one of the sentinel errors.
type ValidationError struct {
	Kind   int    // kind of the refused event
	Tag    string // offending tag name, or "content" or "kind"
	Reason string // stable, human-readable reason
	Err    error  // sentinel this error wraps (ErrBadID, ErrMissingTag, ...)
}

// Error renders e.g. `kind 4129: tag "e": not a 64-hex event id`.
func (e *ValidationError) Error() string {
	if e.Tag == "content" || e.Tag == "kind" {
		return fmt.Sprintf("kind %d: %s: %s", e.Kind, e.Tag, e.Reason)
	}
	return fmt.Sprintf("kind %d: tag %q: %s", e.Kind, clip(e.Tag, 32), e.Reason)
}

// Unwrap returns the sentinel error, for errors.Is.
func (e *ValidationError) Unwrap() error { return e.Err }

// invalid builds a ValidationError whose reason is the sentinel's own text.
func invalid(kind int, tag string, err error) *ValidationError {
	return &ValidationError{Kind: kind, Tag: tag, Reason: err.Error(), Err: err}
}

// invalidBecause builds a ValidationError with a specific reason.
func invalidBecause(kind int, tag string, err error, reason string) *ValidationError {
	return &ValidationError{Kind: kind, Tag: tag, Reason: reason, Err: err}
}

// clip shortens s to at most n bytes so hostile tag names cannot bloat messages.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
