package lease

import "errors"

// Sentinel errors; every error this package returns for these cases wraps one.
var (
	// ErrHeld: another instance holds the lease and it has not expired.
	ErrHeld = errors.New("lease: held by another instance")
	// ErrLost: the lease is no longer this holder's (it expired and was
	// taken, was released, or the agent was removed).
	ErrLost = errors.New("lease: lost")
	// ErrNotFound: no lease row for that agent (it was never added).
	ErrNotFound = errors.New("lease: no such agent")
	// ErrSchemaTooNew: the database was migrated by a newer binary.
	ErrSchemaTooNew = errors.New("lease: database schema is newer than this binary")
)
