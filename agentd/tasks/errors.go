package tasks

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error the store returns for these cases wraps one.
var (
	// ErrNotFound: no task has that id.
	ErrNotFound = errors.New("tasks: task not found")
	// ErrBadTransition: the status change is not allowed from the task's
	// current status (final statuses never change).
	ErrBadTransition = errors.New("tasks: status change not allowed")
	// ErrDeadlinePassed: a task was created, or moved on, after its deadline.
	ErrDeadlinePassed = errors.New("tasks: deadline passed")
	// ErrExists: a task with that id already exists.
	ErrExists = errors.New("tasks: task id already used")
	// ErrClosed: the store is closed.
	ErrClosed = errors.New("tasks: store closed")
)

// TransitionError is a refused status change.
type TransitionError struct {
	ID       string
	From, To Status
	Err      error // ErrBadTransition or ErrDeadlinePassed
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("tasks: task %s: %s -> %s: %v", e.ID, e.From, e.To, e.Err)
}

func (e *TransitionError) Unwrap() error { return e.Err }
