package consent

import (
	"errors"
	"fmt"
)

// Sentinel errors; every error this package returns for these cases wraps one.
var (
	// ErrNotFound: no approval has that id.
	ErrNotFound = errors.New("consent: approval not found")
	// ErrPending: the operation waits for the owner's approval (see PendingError).
	ErrPending = errors.New("consent: owner approval required")
	// ErrDenied: the owner denied the operation.
	ErrDenied = errors.New("consent: denied by the owner")
	// ErrDecided: the approval was already approved or denied.
	ErrDecided = errors.New("consent: already decided")
	// ErrMismatch: the approval given is for another operation, agent or target.
	ErrMismatch = errors.New("consent: approval is for another operation")
	// ErrRevoked: the agent is revoked by its owner.
	ErrRevoked = errors.New("consent: agent revoked")
	// ErrBadAgent: an agent id that is neither 64 hex nor an npub.
	ErrBadAgent = errors.New("consent: not an agent id")
	// ErrClosed: the store is closed.
	ErrClosed = errors.New("consent: closed")
)

// PendingError is an operation waiting for the owner: Approval.ID is what
// the owner approves or denies. It wraps ErrPending.
type PendingError struct{ Approval Approval }

func (e *PendingError) Error() string {
	return fmt.Sprintf("consent: %s needs the owner's approval (approval %s)", e.Approval.Op, e.Approval.ID)
}

func (e *PendingError) Unwrap() error { return ErrPending }

// DeniedError is an operation the owner denied. It wraps ErrDenied.
type DeniedError struct{ Approval Approval }

func (e *DeniedError) Error() string {
	msg := fmt.Sprintf("consent: %s denied by the owner (approval %s)", e.Approval.Op, e.Approval.ID)
	if e.Approval.Reason != "" {
		msg += ": " + e.Approval.Reason
	}
	return msg
}

func (e *DeniedError) Unwrap() error { return ErrDenied }
