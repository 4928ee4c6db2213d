package lessons

import (
	"context"

	"github.com/nbd-wtf/go-nostr"
)

// fetch reads up to max events matching f, newest first, in pages of
// Limits.Page walking back with "until". It stops at a short page. A full
// page made only of events already seen (a same-second pile-up larger than a
// page) steps one second back, which may skip events: that, and reaching
// max, mark the evidence truncated.
func (g *gatherer) fetch(ctx context.Context, f nostr.Filter, max int) ([]*nostr.Event, error) {
	seen := map[string]bool{}
	var out []*nostr.Event
	for len(out) < max {
		f.Limit = min(g.lim.Page, max-len(out))
		page, err := g.q.QuerySync(ctx, f)
		if err != nil {
			return out, err
		}
		fresh, oldest := addNew(&out, seen, page)
		if len(page) < f.Limit {
			return out, nil
		}
		until := oldest
		if fresh == 0 {
			until, g.ev.Truncated = oldest-1, true
		}
		f.Until = &until
	}
	g.ev.Truncated = true
	return out, nil
}

// addNew appends the events of page not yet seen; it returns how many were
// new and the oldest created_at in the page.
func addNew(out *[]*nostr.Event, seen map[string]bool, page []*nostr.Event) (fresh int, oldest nostr.Timestamp) {
	for i, evt := range page {
		if i == 0 || evt.CreatedAt < oldest {
			oldest = evt.CreatedAt
		}
		if !seen[evt.ID] {
			seen[evt.ID] = true
			*out = append(*out, evt)
			fresh++
		}
	}
	return fresh, oldest
}

// fetchBatched runs fetch once per batch of keys (ids or pubkeys), with the
// filter that build makes for the batch, and merges the results (at most
// max events in all).
func (g *gatherer) fetchBatched(ctx context.Context, keys []string, build func([]string) nostr.Filter, max int) ([]*nostr.Event, error) {
	var out []*nostr.Event
	for start := 0; start < len(keys) && len(out) < max; start += g.lim.Batch {
		batch := keys[start:min(start+g.lim.Batch, len(keys))]
		got, err := g.fetch(ctx, build(batch), max-len(out))
		out = append(out, got...)
		if err != nil {
			return out, err
		}
	}
	return dedupe(out), nil
}

// mergeEvents concatenates lists, dropping repeated ids.
func mergeEvents(lists ...[]*nostr.Event) []*nostr.Event {
	var out []*nostr.Event
	for _, l := range lists {
		out = append(out, l...)
	}
	return dedupe(out)
}

// dedupe drops events whose id was already seen, keeping order.
func dedupe(list []*nostr.Event) []*nostr.Event {
	seen := make(map[string]bool, len(list))
	out := list[:0:0]
	for _, evt := range list {
		if !seen[evt.ID] {
			seen[evt.ID] = true
			out = append(out, evt)
		}
	}
	return out
}
