package tasks

import (
	"context"
	"time"
)

// Backend is where a Store keeps its tasks: a SQLite file (the default,
// Config.Path) or a database several instances share (agentd/agentpg,
// `serve --postgres`, Config.Backend). The Store holds the rules
// (statuses, transitions, deadlines); a Backend only stores, and makes
// Update atomic against every other Update on the same backing, also from
// another process. Implementations are safe for concurrent use.
type Backend interface {
	// Get returns task id, or an error wrapping ErrNotFound.
	Get(ctx context.Context, id string) (Task, error)
	// Insert stores a new task; an id in use wraps ErrExists.
	Insert(ctx context.Context, t Task) error
	// Update reads task id, lets change edit it and writes it back, in one
	// transaction that excludes concurrent Updates of the same task. An
	// error from change aborts it and is returned as is.
	Update(ctx context.Context, id string, change func(*Task) error) (Task, error)
	// List returns the tasks matching f, highest priority first, then
	// oldest, then by id.
	List(ctx context.Context, f Filter) ([]Task, error)
	// Active counts, per assignee, its assigned or running tasks.
	Active(ctx context.Context) (map[string]int, error)
	// Overdue returns the ids of unfinished tasks whose deadline is at or
	// before now.
	Overdue(ctx context.Context, now time.Time) ([]string, error)
	// Close releases the backing (for a shared one: this handle only).
	Close() error
}
