package directory

import (
	"context"
	"fmt"
	"math"

	"github.com/agentnode/agentnode/events"
	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/relayclient"
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

// loadAll walks f's matches newest first (relayclient.Walk) and ingests
// each event once. A second too large for loadBudget is left there (it is
// logged), never the seconds before it.
func (d *Directory) loadAll(ctx context.Context, f nostr.Filter) error {
	_, err := relayclient.Walk(ctx, d.cfg.Source, f, relayclient.Paging{Page: loadPage, MaxSecond: math.MaxInt, MaxQueryBytes: loadBudget,
		OnSkip: func(second nostr.Timestamp, read int, why string) error {
			d.log.Warn("directory: load skips the rest of a crowded second", "kinds", f.Kinds, "created_at", second, "read", read, "why", why)
			return nil
		}}, func(page []*nostr.Event) error {
		for _, evt := range page {
			d.ingest(ctx, evt)
		}
		return nil
	})
	return err
}
