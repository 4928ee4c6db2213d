package negsync_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/relay/negsync"
)

// crowd publishes n signed kind-1 notes all stamped second and returns them.
func crowd(t testing.TB, s served, n int, second nostr.Timestamp) []*nostr.Event {
	t.Helper()
	sk := nostr.GeneratePrivateKey()
	evts := make([]*nostr.Event, n)
	for i := range evts {
		evts[i] = &nostr.Event{Kind: 1, CreatedAt: second, Content: fmt.Sprintf("crowd %d", i)}
		evts[i].Sign(sk)
		if err := s.Publish(context.Background(), evts[i]); err != nil {
			t.Fatal(err)
		}
	}
	return evts
}

// A second holding more events than a page (anyone chooses created_at) is
// read through by the REQ fallback, and the older events after it too (the
// old loop stepped past the second after one page and lost the rest); a
// second more crowded than ten pages is left after ten pages of it, counted,
// and the older events are still read.
func TestDownload_crowdedSecond(t *testing.T) {
	for _, c := range []struct {
		name                      string
		older, crowded, page      int
		wantDownloaded, wantSkips int
	}{
		{"larger than a page", 15, 55, 20, 70, 0},
		{"larger than ten pages", 5, 60, 5, 50 + 5, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b := openRelay(t), openRelay(t)
			older := fill(t, b.Relay, c.older, "older")
			crowd(t, b, c.crowded, older[len(older)-1].CreatedAt+10)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := negsync.Download(ctx, dial(t, b.url), a.Relay, nostr.Filter{}, c.page)
			if err != nil || res.Downloaded != c.wantDownloaded || res.SkippedSeconds != c.wantSkips {
				t.Fatalf("download: %+v, %v; want %d downloaded, %d seconds skipped", res, err, c.wantDownloaded, c.wantSkips)
			}
			if c.wantSkips == 0 && !slices.Equal(ids(t, a.Relay), ids(t, b.Relay)) {
				t.Fatal("the two relays differ after a download of everything")
			}
		})
	}
}
