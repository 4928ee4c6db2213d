package crdt

import "errors"

// Sentinel errors. Wrapped errors carry the detail; compare with errors.Is.
var (
	// ErrUnknownCRDT is returned by New for a name that is not in the registry.
	ErrUnknownCRDT = errors.New("crdt: unknown crdt")

	// ErrUnknownContainer is returned for an x-asm container kind other than
	// object, map, list or log.
	ErrUnknownContainer = errors.New("crdt: unknown container")

	// ErrInvalidOp is returned by Apply for an op that is malformed or of a
	// kind the CRDT does not understand. The op is not applied.
	ErrInvalidOp = errors.New("crdt: invalid op")

	// ErrNoClock is returned by a local edit on a CRDT that has no clock
	// (see CRDT.Bind).
	ErrNoClock = errors.New("crdt: no clock bound")

	// ErrTypeMismatch is returned when an or_map field is edited as a
	// different CRDT than the one its schema declares.
	ErrTypeMismatch = errors.New("crdt: type mismatch")
)
