package directory

import (
	"context"

	"github.com/nbd-wtf/go-nostr"
)

// Ingest applies evt as if the Source had stored it (benchmarks fill a
// directory this way without paying the relay's per-event fsync).
func (d *Directory) Ingest(evt *nostr.Event) { d.ingest(context.Background(), evt) }

// SetLoadBudget sets the start-up load's byte budget until the test ends.
func SetLoadBudget(t interface{ Cleanup(func()) }, n int) {
	old := loadBudget
	loadBudget = n
	t.Cleanup(func() { loadBudget = old })
}
