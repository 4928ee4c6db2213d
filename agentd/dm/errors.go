package dm

import (
	"errors"
	"fmt"
)

// Why a gift wrap is not answered.
var (
	// ErrNotGiftWrap: the event is not a kind 1059 gift wrap.
	ErrNotGiftWrap = errors.New("not a kind 1059 gift wrap")
	// ErrBadSeal: the wrap does not hold a validly signed kind 13 seal.
	ErrBadSeal = errors.New("gift wrap holds no valid seal")
	// ErrBadRumor: the seal does not hold a well-formed rumor.
	ErrBadRumor = errors.New("seal holds no valid rumor")
	// ErrImpersonation: the rumor claims an author other than the seal's
	// signer — somebody is speaking for somebody else.
	ErrImpersonation = errors.New("rumor author differs from seal signer")
	// ErrNoAnswer: returned by a Responder, the DM is dropped without any
	// reply (a revoked agent answers nothing).
	ErrNoAnswer = errors.New("dm: the agent does not answer")
	// ErrAnswered: Ledger.Begin found the wrap already answered (by
	// another instance sharing the ledger): the reply is not published.
	ErrAnswered = errors.New("dm: gift wrap already answered")
	// ErrConfig: a required Config field is missing.
	ErrConfig = errors.New("dm: invalid config")
)

// UnwrapError tells which wrap failed to unwrap and why.
type UnwrapError struct {
	WrapID string
	Err    error
}

func (e *UnwrapError) Error() string { return fmt.Sprintf("dm: unwrap %s: %v", e.WrapID, e.Err) }
func (e *UnwrapError) Unwrap() error { return e.Err }
