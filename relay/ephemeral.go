package relay

import (
	"context"

	"github.com/nbd-wtf/go-nostr"
)

// OnEphemeral registers fn to be called with every ephemeral event
// (kinds 20000-29999) the relay accepts — from a websocket client or from
// Publish — after the relay's event policies pass it and before it is
// broadcast to subscribers. Ephemeral events are never stored, so this is
// the only way for the node's own code to see those addressed to it
// (kind 25910 JSON-RPC requests, agentd/nostrrpc). fn runs on the
// accepting goroutine: it must be quick, must not block and must not
// publish (hand the event to a goroutine of your own). With
// Config.Postgres it also receives the ephemeral events accepted by the
// other instances on the database (on the Listener's goroutine; best
// effort: not while its connection is down, not events whose JSON exceeds
// a NOTIFY's 8000 bytes). The returned
// function unregisters fn; after it returns, fn is not called again.
func (r *Relay) OnEphemeral(fn func(*nostr.Event)) (remove func()) {
	return r.ephemeral.add(fn)
}

// fireEphemeral is khatru's OnEphemeralEvent hook: it hands evt to every
// OnEphemeral listener and, in Postgres mode, to the other instances
// (whose subscribers and OnEphemeral listeners get it from their Listener).
func (r *Relay) fireEphemeral(ctx context.Context, evt *nostr.Event) {
	r.ephemeral.fire(evt)
	r.store.shareEphemeral(ctx, evt)
}
