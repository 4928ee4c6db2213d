package lessons

import (
	"context"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/relayclient"
)

// fetch reads up to max events matching f, newest first, in pages of
// Limits.Page, which the Querier answers in full (relayclient.Walk: a second holding more than a page is
// read through, up to ten pages of it). Reaching max, or leaving the rest
// of a crowded second, marks the evidence truncated.
func (g *gatherer) fetch(ctx context.Context, f nostr.Filter, max int) ([]*nostr.Event, error) {
	out, done, err := relayclient.All(ctx, g.q, f, relayclient.Paging{Page: g.lim.Page, Honours: g.lim.Page, MaxEvents: max})
	if done.Cut || done.Skipped > 0 {
		g.ev.Truncated = true
	}
	return out, err
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
