package relay

import (
	"cmp"

	"github.com/nbd-wtf/go-nostr"
)

// SourceQuerier is a Querier that can say which relay an event it
// returned was fetched from ("" when it was already in the local store):
// agentd/lookup's Querier, which looks up on other relays what the store
// lacks.
type SourceQuerier interface {
	Querier
	Source(id string) string
}

// SetVerifier makes GET /api/verify/{agent} and /api/owners/{owner}/agents
// read through q instead of the store alone (nil: the store alone). Safe
// to call at any time.
func (r *Relay) SetVerifier(q SourceQuerier) {
	if q == nil {
		r.verifyQ.Store(nil)
		return
	}
	r.verifyQ.Store(&q)
}

// verifier is the Querier the HTTP verification endpoints read.
func (r *Relay) verifier() Querier {
	if q := r.verifyQ.Load(); q != nil {
		return *q
	}
	return r
}

// noteSources fills v.Sources for v.Events: the relay a lookup fetched
// each from, else "local" (when q can tell; otherwise Sources stays nil).
func (v *Verification) noteSources(q Querier) {
	sq, ok := q.(SourceQuerier)
	if !ok {
		return
	}
	v.Sources = map[string]string{}
	for _, evt := range []*nostr.Event{v.Events.Profile, v.Events.Claims} {
		if evt == nil {
			continue
		}
		v.Sources[evt.ID] = cmp.Or(sq.Source(evt.ID), "local")
	}
}
