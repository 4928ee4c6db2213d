package relay

import (
	"context"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip45/hyperloglog"

	"github.com/agentnode/agentnode/relay/internal/lmdbw"
)

// The pinned eventstore/lmdb has two broken counters (DESIGN §4): CountEvents
// never returns once anything matches, and CountEventsHLL panics unless an
// HLL cache is configured. Neither is wired. Counting walks the same index
// as REQ (lmdbw.Plan / Read), newest first, in one read transaction,
// viewing each candidate in place (lmdbw.Viewer, no copy) before the
// next: a COUNT holds no event whatever the store size and
// however many events share a second. A search COUNT walks the ids the
// search index ranks (one window of maxSearchWindow) the same way. It
// stops at Limits.MaxCount and Limits.CountTimeout.

// count returns how many stored events match filter, capped at MaxCount.
// The filter's own limit is ignored, as NIP-45 asks.
func (s *store) count(ctx context.Context, filter nostr.Filter) (int64, error) {
	n, _, err := s.countWithHLL(ctx, filter, -1)
	return n, err
}

// countWithHLL counts like count and, when offset >= 0, also builds the
// NIP-45 HyperLogLog of the pubkey found at that offset of each event.
func (s *store) countWithHLL(ctx context.Context, filter nostr.Filter, offset int) (int64, *hyperloglog.HyperLogLog, error) {
	done, err := s.enter()
	if err != nil {
		return 0, nil, err
	}
	defer done()
	ctx, cancel := context.WithTimeout(ctx, s.limits.CountTimeout)
	defer cancel()
	var hll *hyperloglog.HyperLogLog
	if offset >= 0 {
		hll = hyperloglog.New(offset)
	}
	var n int64
	err = s.eachMatch(ctx, filter, func(evt *nostr.Event) bool {
		n++
		if hll != nil {
			hll.Add(evt.PubKey)
		}
		return n < int64(s.limits.MaxCount)
	})
	return n, hll, err
}

// eachMatch calls fn with every stored event matching filter (newest
// first; a search's in rank order, within one window) until fn returns
// false. The event is valid only during the call. Expired events are
// skipped.
func (s *store) eachMatch(ctx context.Context, filter nostr.Filter, fn func(*nostr.Event) bool) error {
	if hasHashTagKey(filter) {
		return nil
	}
	filter = dedupeFilter(filter)
	since, until, ok := timeBounds(filter)
	if !ok {
		return nil
	}
	m := matcher{filter: filter, now: nostr.Now(), fn: fn}
	plan := s.reader.Plan(filter)
	if filter.Search != "" {
		window := filter
		window.Limit = maxSearchWindow
		ids, err := s.search.ids(ctx, window)
		if err != nil || len(ids) == 0 {
			return err
		}
		m.wanted = wantedIDs(ids)
		plan = s.reader.Plan(nostr.Filter{IDs: ids})
	}
	err := s.reader.Read(ctx, plan, since, until, m.visit)
	if err == nil {
		err = m.failed
	}
	if err == nil {
		err = ctx.Err()
	}
	return err
}

// matcher is the visit of a count: each candidate is viewed in place
// (lmdbw.Viewer: nothing copied, nothing held) and handed to fn if it
// matches.
type matcher struct {
	filter nostr.Filter
	now    nostr.Timestamp
	fn     func(*nostr.Event) bool
	wanted map[string]struct{} // a search's ids not met yet (nil: any)
	viewer lmdbw.Viewer
	failed error
}

func (m *matcher) visit(_ uint32, raw []byte) bool {
	if len(raw) < 138 {
		m.failed = errRecord
		return false
	}
	if m.wanted != nil && !takeWanted(m.wanted, raw) {
		return true
	}
	evt, err := m.viewer.View(raw)
	if err != nil {
		m.failed = err
		return false
	}
	if isExpired(evt, m.now) || !m.filter.Matches(evt) {
		return true
	}
	return m.fn(evt)
}
