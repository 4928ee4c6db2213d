package pgstore

import "errors"

var (
	// ErrDuplicate means the event is already stored.
	ErrDuplicate = errors.New("pgstore: duplicate event")
	// ErrSuperseded means a newer version of the replaceable or
	// addressable event is stored (NIP-01: newest wins, ties by lowest id).
	ErrSuperseded = errors.New("pgstore: a newer version is stored")
	// ErrEphemeral means an ephemeral event was given to be stored.
	ErrEphemeral = errors.New("pgstore: ephemeral events are not stored")
	// ErrSchemaTooNew means the database was migrated by a newer binary.
	ErrSchemaTooNew = errors.New("pgstore: database schema is newer than this binary")
)
