package relay

import (
	"context"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/relay/internal/khatru"
	"github.com/agentnode/agentnode/relay/internal/lmdbw"
	"github.com/agentnode/agentnode/relay/policies"
)

// NegentropyLimits bound the relay's NIP-77 (negentropy) sessions: per
// connection, per session and relay-wide (docs/RELAY.md, "NIP-77").
// Zero fields take DefaultNegentropyLimits.
type NegentropyLimits = khatru.NegentropyLimits

// DefaultNegentropyLimits: 2 sessions per connection, 250,000 events per
// session, 1,000,000 events held by all sessions together (about 100
// bytes each), 128 KiB frames, sessions closed after 30 s without a
// message.
var DefaultNegentropyLimits = khatru.DefaultNegentropyLimits

// wireNegentropy turns NIP-77 on with the configured bounds; sessions
// read their items from the store directly (negentropyItems).
func (r *Relay) wireNegentropy(rl *khatru.Relay) {
	rl.Negentropy = true
	rl.NegentropyLimits = r.cfg.Negentropy
	rl.NegentropyItems = r.negentropyItems
}

// negentropyItems adds the (created_at, id) of every event filter matches
// that the connection may read, newest first, stopping at filter.Limit
// when one is set; khatru.ErrTooManyItems when more than max would be
// added. Search filters are refused.
func (r *Relay) negentropyItems(ctx context.Context, filter nostr.Filter, max int, add func(nostr.Timestamp, string)) error {
	if filter.Search != "" {
		return errorf("blocked", "search filters cannot be reconciled")
	}
	kinds, authed := r.cfg.restrictedKinds(), khatru.GetAuthed(ctx)
	keep := func(evt *nostr.Event) bool { return policies.ReadableBy(kinds, evt, authed) }
	if s, ok := r.store.(*store); ok {
		return s.negentropyItems(ctx, filter, max, keep, add)
	}
	return queryItems(ctx, r.store, filter, max, keep, add)
}

// itemCounter applies the limit/max rule of negentropyItems to one match:
// whether to add it, whether to go on, and the error that ends the walk.
type itemCounter struct {
	limit, max, n int
}

func (c *itemCounter) admit() (ok bool, err error) {
	if c.limit > 0 && c.n >= c.limit {
		return false, nil
	}
	if c.n >= c.max {
		return false, khatru.ErrTooManyItems
	}
	c.n++
	return true, nil
}

// negentropyItems walks LMDB newest first with the store's own reader,
// decoding each candidate once; it holds no more than the items it adds.
func (s *store) negentropyItems(ctx context.Context, filter nostr.Filter, max int, keep func(*nostr.Event) bool, add func(nostr.Timestamp, string)) error {
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	if hasHashTagKey(filter) {
		return nil
	}
	filter = dedupeFilter(filter)
	since, until, ok := timeBounds(filter)
	if !ok {
		return nil
	}
	c, now := itemCounter{limit: filter.Limit, max: max}, nostr.Now()
	var failed error
	err = s.reader.Read(ctx, s.reader.Plan(filter), since, until, func(_ uint32, raw []byte) bool {
		evt, err := lmdbw.Decode(raw)
		if err != nil {
			failed = err
			return false
		}
		if isExpired(evt, now) || !filter.Matches(evt) || !keep(evt) {
			return true
		}
		var more bool
		if more, failed = c.admit(); more {
			add(evt.CreatedAt, evt.ID)
		}
		return more
	})
	if err != nil {
		return err
	}
	return failed
}

// queryItems is negentropyItems over any backend's query (PostgreSQL):
// it asks for one event more than it may add.
func queryItems(ctx context.Context, b backend, filter nostr.Filter, max int, keep func(*nostr.Event) bool, add func(nostr.Timestamp, string)) error {
	c := itemCounter{limit: filter.Limit, max: max}
	if filter.Limit <= 0 || filter.Limit > max {
		filter.Limit = max + 1
	}
	evts, err := b.querySync(ctx, filter)
	if err != nil {
		return err
	}
	for _, evt := range evts {
		if !keep(evt) {
			continue
		}
		ok, err := c.admit()
		if err != nil || !ok {
			return err
		}
		add(evt.CreatedAt, evt.ID)
	}
	return nil
}

// NegentropyItems adds the (created_at, id) of every stored event filter
// matches, newest first, stopping at filter.Limit when one is set;
// khatru.ErrTooManyItems when more than max would be added. It is the
// in-process side of a sync (relay/negsync): nothing is hidden, restricted
// kinds included.
func (r *Relay) NegentropyItems(ctx context.Context, filter nostr.Filter, max int, add func(nostr.Timestamp, string)) error {
	all := func(*nostr.Event) bool { return true }
	if s, ok := r.store.(*store); ok {
		return s.negentropyItems(ctx, filter, max, all, add)
	}
	return queryItems(ctx, r.store, filter, max, all, add)
}

// ErrTooManyItems is NegentropyItems' error when more events match than
// it may add.
var ErrTooManyItems = khatru.ErrTooManyItems
