package peers

import (
	"errors"
	"strings"
)

// Errors the syncer returns or records in PeerStatus.LastError.
var (
	// ErrNoLocal: Config.Local is nil.
	ErrNoLocal = errors.New("peers: no local store")
	// ErrBadPeerURL: a peer URL is not ws:// or wss://.
	ErrBadPeerURL = errors.New("peers: peer url must be ws:// or wss://")
	// ErrRunning: Run was called while a previous Run is still going.
	ErrRunning = errors.New("peers: already running")
	// ErrDisconnected: the websocket to the peer closed.
	ErrDisconnected = errors.New("peers: disconnected")
	// ErrClosedByPeer: the peer ended a subscription with CLOSED; the
	// wrapping error carries its reason.
	ErrClosedByPeer = errors.New("peers: subscription closed by peer")
	// ErrBadID: an event's id is not the hash of its contents.
	ErrBadID = errors.New("peers: event id does not match its contents")
	// ErrBadSignature: an event's signature does not verify.
	ErrBadSignature = errors.New("peers: event signature is invalid")
)

// outcome is what a publish answer means for the syncer.
type outcome int

const (
	accepted   outcome = iota // stored, or already there
	refused                   // a permanent NIP-01 refusal: skip the event
	retryLater                // rate-limited: wait, then send it again
	failed                    // anything else: end the session, retry from the watermark
)

// classify reads a publish error (local store or peer). A refusal carries
// a NIP-01 prefix (publish passes a peer's OK reason on as it is; a
// leading "msg: ", go-nostr's wrapping, is read through too).
func classify(err error) outcome {
	if err == nil {
		return accepted
	}
	msg := strings.TrimPrefix(err.Error(), "msg: ")
	prefix, _, found := strings.Cut(msg, ":")
	if !found {
		return failed
	}
	switch prefix {
	case "duplicate":
		return accepted
	case "invalid", "blocked", "pow", "restricted", "auth-required", "mute":
		return refused
	case "rate-limited":
		return retryLater
	}
	return failed
}
