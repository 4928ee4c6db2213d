package relay

import (
	"context"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip45/hyperloglog"
)

// The pinned eventstore/lmdb has two broken counters (DESIGN §4): CountEvents
// never returns once anything matches, and CountEventsHLL panics unless an
// HLL cache is configured. Neither is wired. Counting pages through the
// same query path as REQ, newest first, countPage events at a time, so a
// COUNT holds at most one page in memory whatever the store size (the
// eventstore query gathers its whole limit before returning: asking it for
// MaxCount events at once took GBs). It stops at Limits.MaxCount and
// Limits.CountTimeout.

// countPage is how many events one step of a count reads; a page widens
// (doubling) only while one second holds more events than it, up to
// maxCountPage, past which the count stops there: a store holding more
// than 64,000 events of one second gets a lower bound, never unbounded
// memory.
const (
	countPage    = 1000
	maxCountPage = 64 * countPage
)

// count returns how many stored events match filter, capped at MaxCount.
// The filter's own limit is ignored, as NIP-45 asks.
func (s *store) count(ctx context.Context, filter nostr.Filter) (int64, error) {
	n, _, err := s.countWithHLL(ctx, filter, -1)
	return n, err
}

// countWithHLL counts like count and, when offset >= 0, also builds the
// NIP-45 HyperLogLog of the pubkey found at that offset of each event.
func (s *store) countWithHLL(ctx context.Context, filter nostr.Filter, offset int) (int64, *hyperloglog.HyperLogLog, error) {
	ctx, cancel := context.WithTimeout(ctx, s.limits.CountTimeout)
	defer cancel()
	var hll *hyperloglog.HyperLogLog
	if offset >= 0 {
		hll = hyperloglog.New(offset)
	}
	var n int64
	err := s.eachPage(ctx, filter, func(evt *nostr.Event) bool {
		n++
		if hll != nil {
			hll.Add(evt.PubKey)
		}
		return n < int64(s.limits.MaxCount)
	})
	return n, hll, err
}

// eachPage calls fn for every stored event matching filter, newest first,
// reading countPage events at a time, until fn returns false. Pages are
// cut at created_at: the next page asks `until` the oldest timestamp seen
// and skips the events of that second already passed to fn.
func (s *store) eachPage(ctx context.Context, filter nostr.Filter, fn func(*nostr.Event) bool) error {
	page := filter
	page.LimitZero = false
	if filter.Search != "" { // ranked, not by time: one window, as bounded as a search REQ
		page.Limit = maxSearchWindow
		batch, err := s.querySync(ctx, page)
		for _, evt := range batch {
			if !fn(evt) {
				break
			}
		}
		return err
	}
	size := countPage
	var boundary map[string]struct{} // ids already seen at the page's until
	for {
		page.Limit = size
		batch, err := s.querySync(ctx, page)
		if err != nil {
			return err
		}
		fresh := 0
		for _, evt := range batch {
			if _, seen := boundary[evt.ID]; seen {
				continue
			}
			fresh++
			if !fn(evt) {
				return nil
			}
		}
		if len(batch) < size {
			return nil
		}
		oldest := batch[len(batch)-1].CreatedAt
		if page.Until != nil && *page.Until == oldest && fresh == 0 {
			if size >= maxCountPage { // a second holding more events than a page may: a lower bound, in bounded memory
				return nil
			}
			size *= 2 // a whole page within one second: widen it to get past
			continue
		}
		boundary = idsAt(batch, oldest, boundary, page.Until != nil && *page.Until == oldest)
		page.Until = &oldest
	}
}

// idsAt returns the ids of batch created at ts, added to prev when keep.
func idsAt(batch []*nostr.Event, ts nostr.Timestamp, prev map[string]struct{}, keep bool) map[string]struct{} {
	out := map[string]struct{}{}
	if keep {
		out = prev
	}
	for _, evt := range batch {
		if evt.CreatedAt == ts {
			out[evt.ID] = struct{}{}
		}
	}
	return out
}
