package directory

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error the directory returns wraps one of them (or a
// context error), so callers (the JSON-RPC layer) can map them to codes with
// errors.Is.
var (
	// ErrAlreadyRunning: Run was called while another Run runs.
	ErrAlreadyRunning = errors.New("directory: already running")
	// ErrBadProof: a registration or unregistration proof is not a well-formed
	// kind 30333 heartbeat of the right status.
	ErrBadProof = errors.New("bad proof")
	// ErrForgedProof: the proof's id or BIP-340 signature does not verify.
	ErrForgedProof = errors.New("forged proof")
	// ErrStaleProof: the proof's created_at is more than ProofWindow away from now.
	ErrStaleProof = errors.New("stale proof")
	// ErrWrongKey: the proof is signed by a key other than the agent it names.
	ErrWrongKey = errors.New("proof signed by the wrong key")
	// ErrUnknownAgent: no agent with that id is in the directory.
	ErrUnknownAgent = errors.New("unknown agent")
	// ErrBadEvaluation: an evaluation's arguments are invalid (score, agent, key).
	ErrBadEvaluation = errors.New("bad evaluation")
	// ErrNoPublisher: publishing was asked of a directory without a Publisher.
	ErrNoPublisher = errors.New("directory: no publisher")
)

// ProofError is a refused registration or unregistration: which agent (when
// known) and why. It wraps ErrBadProof, ErrForgedProof, ErrStaleProof or
// ErrWrongKey, and the events.ValidationError behind a malformed proof.
type ProofError struct {
	Agent  string // the pubkey the proof claims, may be ""
	Reason string
	Err    error
}

// Error renders e.g. `stale proof: created_at 700s from now (window 300s)`.
func (e *ProofError) Error() string {
	return fmt.Sprintf("%s: %s", sentinelOf(e.Err), e.Reason)
}

// Unwrap returns the sentinel and any cause.
func (e *ProofError) Unwrap() error { return e.Err }

// sentinelOf returns the text of the first proof sentinel err wraps.
func sentinelOf(err error) string {
	for _, s := range []error{ErrForgedProof, ErrStaleProof, ErrWrongKey, ErrBadProof} {
		if errors.Is(err, s) {
			return s.Error()
		}
	}
	return ErrBadProof.Error()
}

// proofErr builds a *ProofError wrapping sentinel (and cause, when not nil).
func proofErr(agent string, sentinel error, reason string, cause error) *ProofError {
	err := sentinel
	if cause != nil {
		err = errors.Join(sentinel, cause)
	}
	return &ProofError{Agent: agent, Reason: reason, Err: err}
}
