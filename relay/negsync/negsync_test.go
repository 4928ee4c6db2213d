package negsync_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fiatjaf/khatru"
	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/relayclient"
	"github.com/agentnode/agentnode/internal/testkit/testrelay"
	"github.com/agentnode/agentnode/relay"
	"github.com/agentnode/agentnode/relay/negsync"
)

// served is a relay behind a real websocket.
type served struct {
	*relay.Relay
	url string
}

func openRelay(t testing.TB) served {
	t.Helper()
	url, r := testrelay.Serve(t, relay.Config{Limits: relay.Limits{EventsPerSecond: 1_000_000, EventsBurst: 1_000_000}})
	return served{r, url}
}

// fill publishes n signed kind-1 notes in-process (8 at a time) and
// returns them.
func fill(t testing.TB, r *relay.Relay, n int, tag string) []*nostr.Event {
	t.Helper()
	sk := nostr.GeneratePrivateKey()
	evts := make([]*nostr.Event, n)
	base := nostr.Now() - nostr.Timestamp(n)
	for i := range evts {
		evts[i] = &nostr.Event{Kind: 1, CreatedAt: base + nostr.Timestamp(i), Content: fmt.Sprintf("%s %d", tag, i)}
		evts[i].Sign(sk)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < n; i += 8 {
				if err := r.Publish(context.Background(), evts[i]); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return evts
}

func dial(t testing.TB, url string) *relayclient.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := relayclient.Dial(ctx, url, relayclient.Options{Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func ids(t testing.TB, r *relay.Relay) []string {
	t.Helper()
	var out []string
	if err := r.NegentropyItems(context.Background(), nostr.Filter{}, 1_000_000, func(_ nostr.Timestamp, id string) { out = append(out, id) }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func TestSync_disjointHistoriesConverge(t *testing.T) {
	a, b := openRelay(t), openRelay(t)
	fill(t, a.Relay, 300, "a")
	fill(t, b.Relay, 200, "b")
	shared := fill(t, a.Relay, 50, "shared")
	for _, evt := range shared {
		b.Publish(context.Background(), evt)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := negsync.Sync(ctx, dial(t, b.url), a.Relay, negsync.Options{Dir: negsync.Both, FrameSize: 4096, Batch: 64})
	if err != nil {
		t.Fatal(err)
	}
	if res.OnlyHere != 300 || res.OnlyThere != 200 || res.Uploaded != 300 || res.Downloaded != 200 || res.Refused != 0 {
		t.Fatalf("result %+v", res)
	}
	if got, want := ids(t, a.Relay), ids(t, b.Relay); len(got) != 550 || !slices.Equal(got, want) {
		t.Fatalf("a holds %d, b %d events; want the same 550", len(got), len(want))
	}
	again, err := negsync.Sync(ctx, dial(t, b.url), a.Relay, negsync.Options{Dir: negsync.Both})
	if err != nil || again.OnlyHere+again.OnlyThere != 0 {
		t.Fatalf("second sync: %+v, %v", again, err)
	}
}

func TestSync_directionAndFilter(t *testing.T) {
	a, b := openRelay(t), openRelay(t)
	fill(t, a.Relay, 20, "a")
	onB := fill(t, b.Relay, 30, "b")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	since := onB[20].CreatedAt
	res, err := negsync.Sync(ctx, dial(t, b.url), a.Relay, negsync.Options{Dir: negsync.Down, Filter: nostr.Filter{Since: &since}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Downloaded != 10 || res.Uploaded != 0 {
		t.Fatalf("down with since: %+v", res)
	}
	if n := len(ids(t, b.Relay)); n != 30 {
		t.Fatalf("down touched the remote: %d events", n)
	}
}

// upstreamRelay is khatru v0.19.1 as released: no NIP-77.
func upstreamRelay(t *testing.T, evts []*nostr.Event) string {
	rl := khatru.NewRelay()
	rl.Log = log.New(io.Discard, "", 0)
	rl.QueryEvents = append(rl.QueryEvents, func(_ context.Context, f nostr.Filter) (chan *nostr.Event, error) {
		ch := make(chan *nostr.Event, len(evts))
		n := 0
		for _, evt := range evts {
			if f.Matches(evt) && (f.Limit <= 0 || n < f.Limit) {
				ch <- evt
				n++
			}
		}
		close(ch)
		return ch, nil
	})
	srv := httptest.NewServer(rl)
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

func TestSync_relayWithoutNIP77(t *testing.T) {
	a := openRelay(t)
	src := fill(t, openRelay(t).Relay, 120, "elsewhere")
	slices.Reverse(src) // newest first, as relays answer
	url := upstreamRelay(t, src)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := negsync.Sync(ctx, dial(t, url), a.Relay, negsync.Options{Answer: 2 * time.Second})
	if !errors.Is(err, negsync.ErrUnsupported) {
		t.Fatalf("sync with a relay without NIP-77: %v, want ErrUnsupported", err)
	}
	res, err := negsync.Download(ctx, dial(t, url), a.Relay, nostr.Filter{}, 50)
	if err != nil || res.Downloaded != 120 {
		t.Fatalf("REQ fallback: %+v, %v", res, err)
	}
}
