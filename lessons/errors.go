package lessons

import "errors"

// Sentinel errors. Errors returned by this package wrap one of them, so
// callers branch with errors.Is.
var (
	// ErrUnknownRule: a Config names a rule that does not exist.
	ErrUnknownRule = errors.New("unknown trust rule")
	// ErrBadAllowlist: an allowlist entry is not an npub, nprofile or 64-hex pubkey.
	ErrBadAllowlist = errors.New("bad allowlist entry")
	// ErrNoDefinition: a Subject has no definition to gather lessons for.
	ErrNoDefinition = errors.New("subject has no definition")
)
