package registry

import "errors"

// Sentinel errors.
var (
	// ErrNotFound: no published package matches the reference.
	ErrNotFound = errors.New("registry: capability not found")
	// ErrBadRef: the reference is neither a capability URI, name[@version]
	// nor a kind-30199 naddr.
	ErrBadRef = errors.New("registry: not a capability reference")
	// ErrInvalid: the resolved package is published but fails acp's
	// checks (acp.FromEvent); the error wraps acp's.
	ErrInvalid = errors.New("registry: invalid package")
	// ErrAmbiguous: several authors publish the name, none is trusted
	// and none was seen first by this node: the caller must name one.
	ErrAmbiguous = errors.New("registry: ambiguous capability name")
	// ErrBadAuthor: the author is neither a 64-hex pubkey nor an npub.
	ErrBadAuthor = errors.New("registry: not a pubkey or npub")
)
