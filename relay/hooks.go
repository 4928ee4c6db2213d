package relay

import (
	"net/http"
	"sync"

	"github.com/nbd-wtf/go-nostr"
)

// storedHooks fans events out to listeners: the stored events to the
// OnStored ones, the ephemeral events to the OnEphemeral ones.
type storedHooks struct {
	mu   sync.RWMutex
	next int
	fns  map[int]func(*nostr.Event)
}

// OnStored registers fn to be called with every event the relay stores
// (published in-process or by a websocket client, kind 5 deletions
// included), after it is stored. fn runs on the store's announcer
// goroutine, once per stored event in commit order, after the event is
// durable and before Publish returns or the client gets its OK: it must be
// quick, must not block and must not publish (a publish from fn would wait
// for the announcer itself). With Config.Postgres, fn runs on the pgstore
// Listener's goroutine instead, for the events stored by every instance on
// the database, in commit order, once each; an event stored through this
// instance is announced before its OK as well (unless the Listener lags
// more than 5 s). The returned function unregisters fn; after it returns,
// fn is not called again.
func (r *Relay) OnStored(fn func(*nostr.Event)) (remove func()) {
	return r.stored.add(fn)
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

// fire calls every listener with evt.
func (h *storedHooks) fire(evt *nostr.Event) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	for _, fn := range h.fns {
		fn(evt)
	}
}

// Handle mounts h on the relay's HTTP mux beside its own endpoints (pattern
// as for http.ServeMux; it must not conflict with /api/verify/, /api/owners/
// or /healthz). Plain HTTP requests reach it; websocket upgrades and NIP-11
// requests do not. Call it before serving.
func (r *Relay) Handle(pattern string, h http.Handler) {
	r.khatru.Relay.Router().Handle(pattern, h)
}
