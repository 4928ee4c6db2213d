package directory

import (
	"context"
	"fmt"

	"github.com/agentnode/agentnode/events"
	"github.com/nbd-wtf/go-nostr"
)

// loadPage is how many new events one query of the start-up load asks
// for (docs/DIRECTORY.md#start-up).
const loadPage = 500

// loadBudget bounds, in bytes (estimated from the events' sizes), the
// answer of one query of the load. Anyone chooses created_at: walking a
// second that holds more than this stops there, and the rest of that
// second is not loaded (it is logged); the seconds before it are. A
// variable only for tests.
var loadBudget = 128 << 20

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

// loadAll pages backwards through f's matches with a cursor (cursor.go)
// and ingests each event once.
func (d *Directory) loadAll(ctx context.Context, f nostr.Filter) error {
	var cur loadCursor
	for {
		q := cur.filter(f)
		evts, err := d.cfg.Source.QuerySync(ctx, q)
		if err != nil {
			return err
		}
		for _, evt := range evts {
			if !cur.seen(evt) {
				d.ingest(ctx, evt)
			}
		}
		if len(evts) < q.Limit {
			return nil // the store holds nothing more at or before the cursor
		}
		if skipped := cur.advance(evts); skipped != "" {
			d.log.Warn("directory: load skips the rest of a crowded second", "kinds", f.Kinds, "created_at", cur.until+1, "why", skipped)
		}
	}
}
