package relay

import (
	"context"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip45/hyperloglog"
)

// The pinned eventstore/lmdb has two broken counters (DESIGN §4): CountEvents
// never returns once anything matches, and CountEventsHLL panics unless an
// HLL cache is configured. Neither is wired; counting walks the same query
// path as REQ, bounded by Limits.MaxCount and Limits.CountTimeout.

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
	filter.Limit = s.limits.MaxCount
	filter.LimitZero = false
	ch, err := s.query(ctx, filter)
	if err != nil {
		return 0, nil, err
	}
	var hll *hyperloglog.HyperLogLog
	if offset >= 0 {
		hll = hyperloglog.New(offset)
	}
	var n int64
	for evt := range ch {
		n++
		if hll != nil {
			hll.Add(evt.PubKey)
		}
	}
	return n, hll, ctx.Err()
}
