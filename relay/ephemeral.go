package relay

import (
	"context"
	"runtime"
	"sync"
	"weak"

	"github.com/nbd-wtf/go-nostr"
)

// ephemeralHooks holds each Relay's OnEphemeral listeners, keyed weakly by
// the Relay so that a collected Relay takes its listeners with it. (They
// live beside the Relay rather than in it so that this concern stays in
// this file; relay.go only installs fireEphemeral.)
var ephemeralHooks sync.Map // weak.Pointer[Relay] -> *storedHooks

// OnEphemeral registers fn to be called with every ephemeral event
// (kinds 20000-29999) the relay accepts — from a websocket client or from
// Publish — after the relay's event policies pass it and before it is
// broadcast to subscribers. Ephemeral events are never stored, so this is
// the only way for the node's own code to see those addressed to it
// (kind 25910 JSON-RPC requests, agentd/nostrrpc). fn runs on the
// accepting goroutine: it must be quick, must not block and must not
// publish (hand the event to a goroutine of your own). The returned
// function unregisters fn; after it returns, fn is not called again.
func (r *Relay) OnEphemeral(fn func(*nostr.Event)) (remove func()) {
	return r.ephemeralHooks().add(fn)
}

// ephemeralHooks returns r's listener set, creating it on first use.
func (r *Relay) ephemeralHooks() *storedHooks {
	key := weak.Make(r)
	if h, ok := ephemeralHooks.Load(key); ok {
		return h.(*storedHooks)
	}
	h, loaded := ephemeralHooks.LoadOrStore(key, &storedHooks{})
	if !loaded {
		runtime.AddCleanup(r, func(k weak.Pointer[Relay]) { ephemeralHooks.Delete(k) }, key)
	}
	return h.(*storedHooks)
}

// fireEphemeral is khatru's OnEphemeralEvent hook: it hands evt to every
// OnEphemeral listener.
func (r *Relay) fireEphemeral(_ context.Context, evt *nostr.Event) {
	if h, ok := ephemeralHooks.Load(weak.Make(r)); ok {
		h.(*storedHooks).fire(evt)
	}
}

// add registers fn and returns its remover.
func (h *storedHooks) add(fn func(*nostr.Event)) (remove func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fns == nil {
		h.fns = map[int]func(*nostr.Event){}
	}
	id := h.next
	h.next++
	h.fns[id] = fn
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.fns, id)
	}
}
