package relayclient_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/relayclient"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/internal/testkit/testrelay"
	"github.com/agentnode/agentnode/relay"
)

// signedAt signs n notes of k created at at.
func signedAt(t *testing.T, k testkit.Key, at nostr.Timestamp, n int, tag string) []*nostr.Event {
	t.Helper()
	out := make([]*nostr.Event, n)
	for i := range out {
		evt := &nostr.Event{Kind: 1, CreatedAt: at, Content: fmt.Sprint(tag, " ", i), Tags: nostr.Tags{}}
		if err := evt.Sign(k.SK); err != nil {
			t.Fatal(err)
		}
		out[i] = evt
	}
	return out
}

// store publishes evts into r, a few at a time in parallel (the order
// within one call is not kept; calls come one after the other).
func store(t *testing.T, r *relay.Relay, evts []*nostr.Event) {
	t.Helper()
	testkit.Parallel(t, len(evts), 8, func(i int) error { return r.Publish(context.Background(), evts[i]) })
}

// crowd is a store with 5 newer notes, 250 in one second, and 5 older.
type crowd struct {
	newer, crowded, older []*nostr.Event
	second                nostr.Timestamp
}

func newCrowd(t *testing.T, n int) crowd {
	k := testkit.NewKey(t)
	at := nostr.Timestamp(time.Now().Add(-time.Hour).Unix())
	var c crowd
	c.second = at
	for i := range 5 {
		c.newer = append(c.newer, signedAt(t, k, at+1+nostr.Timestamp(i), 1, "newer")...)
		c.older = append(c.older, signedAt(t, k, at-1-nostr.Timestamp(i), 1, "older")...)
	}
	c.crowded = signedAt(t, k, at, n, "crowded")
	return c
}

func (c crowd) all() []*nostr.Event {
	return append(append(append([]*nostr.Event{}, c.newer...), c.crowded...), c.older...)
}

// walkAll walks q and counts how often each id came, failing on an
// empty page.
func walkAll(t *testing.T, q relayclient.Querier, p relayclient.Paging) (map[string]int, relayclient.Walked) {
	t.Helper()
	got := map[string]int{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done, err := relayclient.Walk(ctx, q, nostr.Filter{Kinds: []int{1}}, p, func(page []*nostr.Event) error {
		if len(page) == 0 {
			t.Error("Walk handed on an empty page")
		}
		for _, evt := range page {
			got[evt.ID]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, done
}

// everyOnce fails unless got holds each of want exactly once.
func everyOnce(t *testing.T, got map[string]int, want []*nostr.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("walk read %d distinct events, want %d", len(got), len(want))
	}
	for _, evt := range want {
		if got[evt.ID] != 1 {
			t.Fatalf("event %s (created_at %d) read %d times, want once", evt.ID, evt.CreatedAt, got[evt.ID])
		}
	}
}

// A second holding more events than a page is read through, each event
// once, and the older seconds after it — whichever was stored first.
func TestWalk_crowdedSecondLargerThanAPage(t *testing.T) {
	for _, order := range []string{"crowd first", "crowd last"} {
		t.Run(order, func(t *testing.T) {
			r := testrelay.Open(t)
			c := newCrowd(t, 250)
			if order == "crowd first" {
				store(t, r, c.crowded)
				store(t, r, append(c.newer, c.older...))
			} else {
				store(t, r, append(c.older, c.newer...))
				store(t, r, c.crowded)
			}
			got, done := walkAll(t, r, relayclient.Paging{Page: 40})
			everyOnce(t, got, c.all())
			if done.Skipped != 0 || done.Cut || done.Events != 260 {
				t.Errorf("Walked = %+v, want 260 events, nothing skipped or cut", done)
			}
		})
	}
}

// The empty store: one query, nothing handed on.
func TestWalk_empty(t *testing.T) {
	got, done := walkAll(t, testrelay.Open(t), relayclient.Paging{})
	if len(got) != 0 || done != (relayclient.Walked{Pages: 1}) {
		t.Fatalf("empty relay: %d events, %+v; want none in one query", len(got), done)
	}
}

// A second past MaxSecond is left (OnSkip says so) and the older seconds
// are still read.
func TestWalk_maxSecondLeavesTheRestAndGoesOn(t *testing.T) {
	r := testrelay.Open(t)
	c := newCrowd(t, 250)
	store(t, r, c.all())
	var skipped []nostr.Timestamp
	got, done := walkAll(t, r, relayclient.Paging{Page: 40, MaxSecond: 100, OnSkip: func(at nostr.Timestamp, read int, why string) error {
		if read < 100 || why == "" {
			t.Errorf("OnSkip(%d, %d, %q): want at least 100 read and a reason", at, read, why)
		}
		skipped = append(skipped, at)
		return nil
	}})
	if len(skipped) != 1 || skipped[0] != c.second || done.Skipped != 1 {
		t.Errorf("skipped %v (Walked %+v), want the crowded second %d once", skipped, done, c.second)
	}
	for _, evt := range append(c.newer, c.older...) {
		if got[evt.ID] != 1 {
			t.Errorf("event at %d read %d times, want once", evt.CreatedAt, got[evt.ID])
		}
	}
	if n := len(got) - 10; n < 100 || n >= 250 {
		t.Errorf("read %d of the crowded second, want part of it (at least MaxSecond)", n)
	}
}

// A relay that answers fewer events than a widened query asks (its own
// max limit) makes the walk leave the rest of that second, never loop;
// OnSkip's error ends the walk with it.
func TestWalk_relayCapLeavesTheSecond(t *testing.T) {
	lim := relay.DefaultLimits
	lim.MaxLimit = 60
	url, r := testrelay.Serve(t, relay.Config{Limits: lim})
	c := newCrowd(t, 100)
	store(t, r, c.all())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := relayclient.Dial(ctx, url, relayclient.Options{Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	got, done := walkAll(t, conn, relayclient.Paging{Page: 40})
	if done.Skipped != 1 || len(got) != 5+60+5 {
		t.Errorf("read %d events, Walked %+v; want the 10 outside the crowd, 60 of it and one second skipped", len(got), done)
	}
	got, done = walkAll(t, conn, relayclient.Paging{Page: 40, Cap: 60})
	if done.Skipped != 1 || len(got) != 5+60+5 {
		t.Errorf("Cap 60: read %d events, Walked %+v; want the same", len(got), done)
	}
	stop := errors.New("stop")
	_, err = relayclient.Walk(ctx, conn, nostr.Filter{Kinds: []int{1}}, relayclient.Paging{Page: 40, OnSkip: func(nostr.Timestamp, int, string) error { return stop }}, func([]*nostr.Event) error { return nil })
	if !errors.Is(err, stop) {
		t.Errorf("OnSkip's error: Walk = %v, want it", err)
	}
}

// MaxEvents and MaxPages end a walk with Cut; MaxEvents exactly.
func TestWalk_bounds(t *testing.T) {
	r := testrelay.Open(t)
	c := newCrowd(t, 250)
	store(t, r, c.all())
	got, done := walkAll(t, r, relayclient.Paging{Page: 40, MaxEvents: 77})
	if len(got) != 77 || done.Events != 77 || !done.Cut {
		t.Errorf("MaxEvents 77: read %d, Walked %+v", len(got), done)
	}
	got, done = walkAll(t, r, relayclient.Paging{Page: 40, MaxPages: 3})
	if done.Pages != 3 || !done.Cut || len(got) >= 260 {
		t.Errorf("MaxPages 3: read %d, Walked %+v", len(got), done)
	}
	all, done, err := relayclient.All(context.Background(), r, nostr.Filter{Kinds: []int{1}}, relayclient.Paging{Page: 40})
	if err != nil || len(all) != 260 || done.Cut {
		t.Errorf("All: %d events, %+v, %v; want 260", len(all), done, err)
	}
}

// A cancelled context ends the walk with its error, between pages.
func TestWalk_cancel(t *testing.T) {
	r := testrelay.Open(t)
	store(t, r, newCrowd(t, 250).all())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pages := 0
	done, err := relayclient.Walk(ctx, r, nostr.Filter{Kinds: []int{1}}, relayclient.Paging{Page: 40}, func([]*nostr.Event) error {
		if pages++; pages == 2 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || done.Pages != 2 {
		t.Fatalf("cancelled on page 2: Walked %+v, %v; want context.Canceled after 2 pages", done, err)
	}
}

// A relay capping every answer below the page (max_limit 7, pages of 40)
// is read through, a few events at a time, each once.
func TestWalk_relayCapBelowThePage(t *testing.T) {
	lim := relay.DefaultLimits
	lim.MaxLimit, lim.DefaultLimit = 7, 7
	url, r := testrelay.Serve(t, relay.Config{Limits: lim})
	c := newCrowd(t, 5)
	store(t, r, c.all())
	got, done := walkAll(t, dial(t, url), relayclient.Paging{Page: 40})
	everyOnce(t, got, c.all())
	if done.Skipped != 0 || done.Cut || done.Pages < 3 {
		t.Errorf("Walked = %+v, want nothing skipped or cut, in 3 pages or more", done)
	}
}

// A relay known to answer a page in full (Honours) ends the walk at the
// first short page; one not known is asked again to make sure.
func TestWalk_honours(t *testing.T) {
	r := testrelay.Open(t)
	c := newCrowd(t, 3)
	store(t, r, c.all())
	got, done := walkAll(t, r, relayclient.Paging{Page: 40, Honours: 40})
	everyOnce(t, got, c.all())
	if done.Pages != 1 {
		t.Errorf("Honours 40: %d queries, want 1", done.Pages)
	}
	got, done = walkAll(t, r, relayclient.Paging{Page: 40})
	everyOnce(t, got, c.all())
	if done.Pages < 2 || done.Pages > 3 {
		t.Errorf("no Honours: %d queries, want 2 or 3", done.Pages)
	}
}

// A capped crowded second with nothing older: only Cap tells the walk
// that the relay holds more of it.
func TestWalk_cappedOldestSecond(t *testing.T) {
	lim := relay.DefaultLimits
	lim.MaxLimit = 60
	url, r := testrelay.Serve(t, relay.Config{Limits: lim})
	store(t, r, newCrowd(t, 100).crowded)
	conn := dial(t, url)
	if got, done := walkAll(t, conn, relayclient.Paging{Page: 40, Cap: 60}); done.Skipped != 1 || len(got) != 60 {
		t.Errorf("Cap 60: read %d, Walked %+v; want 60 and the rest of the second skipped", len(got), done)
	}
	if got, done := walkAll(t, conn, relayclient.Paging{Page: 40}); done.Skipped != 0 || len(got) != 60 {
		t.Errorf("no Cap: read %d, Walked %+v; want 60, the cap unseen", len(got), done)
	}
}

// dial connects to url until the test ends.
func dial(t *testing.T, url string) *relayclient.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := relayclient.Dial(ctx, url, relayclient.Options{Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// The filter's until and since bound the walk.
func TestWalk_filterWindow(t *testing.T) {
	r := testrelay.Open(t)
	c := newCrowd(t, 50)
	store(t, r, c.all())
	until, since := c.second, c.second-2
	got, _, err := relayclient.All(context.Background(), r, nostr.Filter{Kinds: []int{1}, Until: &until, Since: &since}, relayclient.Paging{Page: 20})
	if err != nil || len(got) != 52 {
		t.Fatalf("until the crowded second, since 2 before: %d events, %v; want 52", len(got), err)
	}
	for _, evt := range got {
		if evt.CreatedAt > until || evt.CreatedAt < since {
			t.Fatalf("event at %d outside [%d, %d]", evt.CreatedAt, since, until)
		}
	}
}

// After a second is left, the walk goes on into the second just before
// it, crowded too.
func TestWalk_twoCrowdedSecondsInARow(t *testing.T) {
	r := testrelay.Open(t)
	k := testkit.NewKey(t)
	at := nostr.Timestamp(time.Now().Add(-time.Hour).Unix())
	first, second := signedAt(t, k, at, 120, "first"), signedAt(t, k, at-1, 70, "second")
	store(t, r, append(first, second...))
	got, done := walkAll(t, r, relayclient.Paging{Page: 20, MaxSecond: 60})
	if done.Skipped != 2 {
		t.Errorf("Walked %+v, want both seconds skipped past 60", done)
	}
	for _, evt := range append(first, second...) {
		if got[evt.ID] > 1 {
			t.Fatalf("event read %d times", got[evt.ID])
		}
	}
	if len(got) < 120 {
		t.Errorf("read %d, want at least 60 of each second", len(got))
	}
}
