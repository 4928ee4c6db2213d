package pgstore

import "errors"

var (
	// ErrDuplicate means the event is already stored.
	ErrDuplicate = errors.New("pgstore: duplicate event")
	// ErrSuperseded means a newer version of the replaceable or
	// addressable event is stored (NIP-01: newest wins, ties by lowest id).
	ErrSuperseded = errors.New("pgstore: a newer version is stored")
	// ErrDeleted means a stored NIP-09 deletion by the event's author
	// covers it (its id, or its address at or after its created_at).
	ErrDeleted = errors.New("pgstore: the event has been deleted")
	// ErrUnstorable means the event holds a string PostgreSQL cannot store
	// (a NUL character, invalid UTF-8).
	ErrUnstorable = errors.New("pgstore: the event holds a NUL character or invalid UTF-8")
	// ErrTooLarge means an ephemeral event's JSON does not fit a NOTIFY
	// payload (8000 bytes): it reaches this instance's subscribers only.
	ErrTooLarge = errors.New("pgstore: event too large for NOTIFY")
	// ErrEphemeral means an ephemeral event was given to be stored.
	ErrEphemeral = errors.New("pgstore: ephemeral events are not stored")
	// ErrEnough is returned by a QueryWithin take function to stop reading
	// rows: the events read so far are the answer.
	ErrEnough = errors.New("pgstore: enough rows")
	// ErrSchemaTooNew means the database was migrated by a newer binary.
	ErrSchemaTooNew = errors.New("pgstore: database schema is newer than this binary")
)
