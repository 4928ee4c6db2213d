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
// read through by the REQ fallback, and the older events after it too; the
// old loop stepped past the second after one page and lost the rest.
func TestDownload_crowdedSecondLargerThanAPage(t *testing.T) {
	a, b := openRelay(t), openRelay(t)
	older := fill(t, b.Relay, 15, "older")
	crowd(t, b, 55, older[len(older)-1].CreatedAt+10)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := negsync.Download(ctx, dial(t, b.url), a.Relay, nostr.Filter{}, 20)
	if err != nil || res.Downloaded != 70 || res.SkippedSeconds != 0 {
		t.Fatalf("download: %+v, %v; want 70 downloaded, none skipped", res, err)
	}
	if got, want := ids(t, a.Relay), ids(t, b.Relay); !slices.Equal(got, want) {
		t.Fatalf("a holds %d events, b %d", len(got), len(want))
	}
}

// A second more crowded than ten pages is left after ten pages of it
// (and counted), and the older events are still read.
func TestDownload_overcrowdedSecondIsBounded(t *testing.T) {
	a, b := openRelay(t), openRelay(t)
	older := fill(t, b.Relay, 5, "older")
	crowd(t, b, 60, older[len(older)-1].CreatedAt+10)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := negsync.Download(ctx, dial(t, b.url), a.Relay, nostr.Filter{}, 5)
	if err != nil || res.SkippedSeconds != 1 || res.Downloaded != 50+5 {
		t.Fatalf("download: %+v, %v; want 55 downloaded (10 pages of the crowded second, the 5 older), 1 second skipped", res, err)
	}
}
