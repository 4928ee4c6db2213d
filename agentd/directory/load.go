package directory

import (
	"context"
	"fmt"

	"github.com/agentnode/agentnode/events"
	"github.com/nbd-wtf/go-nostr"
)

// loadPage is the page size of the initial load (relays cap a query's limit;
// agentnode's relay at 5000).
const loadPage = 1000

// loadFilters are what the directory reads at start. Definitions come first
// and profiles before claims only for fewer refreshes: apply is order-free.
func loadFilters() []nostr.Filter {
	return []nostr.Filter{
		{Kinds: []int{events.KindDefinition}},
		{Kinds: []int{events.KindProfile}},
		{Kinds: []int{events.KindOwnerClaims}},
		{Kinds: []int{events.KindHeartbeat}},
		{Kinds: []int{events.KindLabel}, Tags: nostr.TagMap{"L": {events.EvalNamespace}}},
	}
}

// load reads everything the Source holds into the index.
func (d *Directory) load(ctx context.Context) error {
	for _, f := range loadFilters() {
		if err := d.loadAll(ctx, f); err != nil {
			return fmt.Errorf("directory: load kind %v: %w", f.Kinds, err)
		}
	}
	return nil
}

// loadAll pages backwards through f's matches (until = the oldest created_at
// seen, inclusive, ids deduplicated) until a page brings nothing new.
func (d *Directory) loadAll(ctx context.Context, f nostr.Filter) error {
	seen := map[string]bool{}
	f.Limit = loadPage
	for {
		evts, err := d.cfg.Source.QuerySync(ctx, f)
		if err != nil {
			return err
		}
		fresh, oldest := 0, nostr.Timestamp(0)
		for _, evt := range evts {
			if oldest == 0 || evt.CreatedAt < oldest {
				oldest = evt.CreatedAt
			}
			if !seen[evt.ID] {
				seen[evt.ID] = true
				fresh++
				d.ingest(evt)
			}
		}
		if fresh == 0 || len(evts) < loadPage {
			return nil
		}
		f.Until = &oldest
	}
}
