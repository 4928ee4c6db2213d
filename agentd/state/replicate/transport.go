package replicate

import (
	"context"
	"strings"

	"github.com/nbd-wtf/go-nostr"
)

// Publisher sends signed events to a relay.
//
// Publish returns nil once the relay has accepted evt (a duplicate counts
// as accepted). A refusal is an error whose text carries the relay's
// NIP-01 prefix ("invalid: ...", "blocked: ..."): those are permanent and
// the replicator drops the event; anything else (no connection,
// "rate-limited:", "auth-required:", "error:") is retried later.
// Implementations must be safe for concurrent use.
type Publisher interface {
	Publish(ctx context.Context, evt *nostr.Event) error
}

// Subscriber reads events from a relay.
//
// Query returns the stored events matching filter, newest first, at most
// filter.Limit of them (the relay may cap the limit lower).
//
// Subscribe delivers the events matching any of filters — stored ones,
// then live ones as they arrive — to fn, one at a time from one goroutine,
// and blocks until ctx ends (returning ctx's error) or the subscription
// ends (connection lost, the relay closed it: an error saying why). eose,
// if not nil, is called once (from the same goroutine, so it must not
// block) when the stored events have been delivered and the relay is
// sending live ones. An event may be delivered more than once.
//
// Both authenticate (NIP-42) as needed. Implementations must be safe for
// concurrent use.
type Subscriber interface {
	Query(ctx context.Context, filter nostr.Filter) ([]*nostr.Event, error)
	Subscribe(ctx context.Context, filters nostr.Filters, fn func(*nostr.Event), eose func()) error
}

// Link is one relay the replicator pushes ops to and pulls ops from.
type Link struct {
	// Name identifies the relay in logs and in the names of the persisted
	// cursors (use its URL): renaming a link starts it over from scratch.
	Name       string
	Publisher  Publisher  // nil: do not push to this relay
	Subscriber Subscriber // nil: do not pull from this relay
}

// permanent reports whether a publish error is a refusal that retrying
// will not change.
func permanent(err error) bool {
	msg := err.Error()
	for _, p := range []string{"invalid: ", "blocked: ", "pow: ", "restricted: "} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
