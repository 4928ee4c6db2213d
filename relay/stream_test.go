package relay

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// streamedStore is an LMDB relay whose answers to {"kinds":[1]} stream:
// 50 events of 10 kB under a 100 kB ceiling.
func streamedStore(t *testing.T, limits Limits) (*testRelay, *store) {
	t.Helper()
	limits.EventsPerSecond, limits.MaxQueryBytes = -1, 100<<10
	tr := openTestRelay(t, t.TempDir(), limits)
	crowdedStore(t, tr, 40, 10_000, nostr.Now()-1000, true)
	return tr, tr.store.(*store)
}

// drain reads ch until it is closed; it fails the test if that takes
// longer than a generous deadline (the stream did not end).
func drain(t *testing.T, ch chan *nostr.Event) int {
	t.Helper()
	deadline := time.After(30 * time.Second)
	n := 0
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return n
			}
			n++
		case <-deadline:
			t.Fatal("the streamed answer's channel was not closed")
		}
	}
}

// A streamed answer ends with its context (a REQ CLOSEd, a client gone):
// the channel is closed, the budget given back, and the store closes.
func TestStore_StreamEndsWithItsContext(t *testing.T) {
	tr, s := streamedStore(t, Limits{})
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := s.query(ctx, nostr.Filter{Kinds: []int{1}, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if evt := <-ch; evt == nil {
		t.Fatal("no first event")
	}
	if s.budget.held.Load() == 0 {
		t.Fatal("a stream that is being read holds nothing of the budget")
	}
	cancel()
	if n := drain(t, ch); n >= 49 {
		t.Fatalf("%d more events after the context ended", n)
	}
	if held := s.budget.held.Load(); held != 0 {
		t.Fatalf("%d bytes of the budget still held after the stream ended", held)
	}
	closed := make(chan error, 1)
	go func() { closed <- s.close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the store did not close: the stream still holds it")
	}
	_ = tr
}

// A chunk refused by the process's budget in the middle of a stream cuts
// the answer with errBusy (querySync returns it), never silently.
func TestStore_StreamRefusedMidwayReportsBusy(t *testing.T) {
	_, s := streamedStore(t, Limits{QueryMemory: 1 << 20})
	ctx, failed := withQueryErr(context.Background())
	ch, err := s.query(ctx, nostr.Filter{Kinds: []int{1}, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	// The first chunk is read and its goroutine waits for a reader: shrink
	// the budget to nothing, so that the next chunk is refused (written
	// before the first receive, which completes the goroutine's first
	// send: no race).
	s.budget.limit = 0
	n := drain(t, ch)
	if n == 0 || n >= 50 {
		t.Fatalf("%d events answered; want the first chunk only", n)
	}
	if !errors.Is(*failed, errBusy) {
		t.Fatalf("stream cut by the budget reported %v, want errBusy", *failed)
	}
}

// A REQ the process's budget refuses is CLOSED with the rate-limited
// reason (it was a NOTICE followed by EOSE, which a client reads as an
// empty answer).
func TestRelay_BusyQueryIsClosedNotEOSE(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{EventsPerSecond: -1, QueryMemory: 8 << 10})
	crowdedStore(t, tr, 5, 10_000, nostr.Now()-1000, true)
	reason := closedReason(t, tr.connect(t), nostr.Filter{Kinds: []int{1}, Limit: 5})
	if !strings.HasPrefix(reason, "rate-limited: too many large queries") {
		t.Fatalf("REQ past the query budget: CLOSED %q, want a rate-limited reason", reason)
	}
}

// A REQ whose answer streams gets every event over the websocket, in
// NIP-01's order, written from the JSON the store decoded (SetEncoded is
// called while khatru writes: run with -race).
func TestRelay_StreamedREQArrivesWhole(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{EventsPerSecond: -1, MaxQueryBytes: 100 << 10})
	all := crowdedStore(t, tr, 40, 10_000, nostr.Now()-1000, true)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sub, err := tr.connect(t).Subscribe(ctx, nostr.Filters{{Kinds: []int{1}, Limit: 50}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsub()
	var got []*nostr.Event
	for {
		select {
		case evt := <-sub.Events:
			got = append(got, evt)
			continue
		case <-sub.EndOfStoredEvents:
		case reason := <-sub.ClosedReason:
			t.Fatalf("CLOSED %q after %d events", reason, len(got))
		case <-ctx.Done():
			t.Fatalf("no EOSE after %d events", len(got))
		}
		break
	}
	if !slices.Equal(idsOf(got), nip01Order(all)) {
		t.Fatalf("%d of %d events over the websocket, or not in NIP-01's order", len(got), len(all))
	}
}
