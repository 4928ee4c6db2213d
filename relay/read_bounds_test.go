package relay

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// crowdedStore publishes n events of kind 1 at one second, in increasing
// id order when asc, else decreasing, plus a few at other seconds; it
// returns them all. The reader walks a second's events from the last
// published: increasing ids make each one read sort before every one read
// before it, the worst order for a reader that keeps the lowest ids.
func crowdedStore(t *testing.T, tr *testRelay, n, contentBytes int, at nostr.Timestamp, asc bool) []*nostr.Event {
	t.Helper()
	sk := nostr.GeneratePrivateKey()
	var all []*nostr.Event
	for i := range n + 10 {
		when := at
		if i >= n {
			when = at - nostr.Timestamp(i-n+1)
			if i%2 == 0 {
				when = at + nostr.Timestamp(i)
			}
		}
		evt := &nostr.Event{Kind: 1, CreatedAt: when, Content: fmt.Sprint(i, strings.Repeat("c", contentBytes))}
		if err := evt.Sign(sk); err != nil {
			t.Fatal(err)
		}
		all = append(all, evt)
	}
	slices.SortStableFunc(all[:n], func(a, b *nostr.Event) int {
		if asc {
			return strings.Compare(a.ID, b.ID)
		}
		return strings.Compare(b.ID, a.ID)
	})
	for _, evt := range all {
		if err := tr.Publish(context.Background(), evt); err != nil {
			t.Fatal(err)
		}
	}
	return all
}

// nip01Order sorts newest first, ties by id ascending.
func nip01Order(evts []*nostr.Event) []string {
	evts = slices.Clone(evts)
	slices.SortFunc(evts, func(a, b *nostr.Event) int {
		return cmp.Or(cmp.Compare(b.CreatedAt, a.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	ids := make([]string, len(evts))
	for i, evt := range evts {
		ids[i] = evt.ID
	}
	return ids
}

func idsOf(evts []*nostr.Event) []string {
	out := make([]string, len(evts))
	for i, evt := range evts {
		out[i] = evt.ID
	}
	return out
}

// A crowded second published in the worst order is still cut by id: every
// limit, with and without until, answers the brute-force prefix.
func TestRelay_CrowdedSecondIsCutByID(t *testing.T) {
	for _, asc := range []bool{true, false} {
		t.Run(fmt.Sprint("ascending=", asc), func(t *testing.T) { crowdedIsCutByID(t, asc) })
	}
}

func crowdedIsCutByID(t *testing.T, asc bool) {
	tr := openTestRelay(t, t.TempDir(), Limits{EventsPerSecond: -1})
	at := nostr.Now() - 1000
	all := crowdedStore(t, tr, 300, 10, at, asc)
	for _, limit := range []int{1, 2, 7, 150, 299, 300, 400} {
		for _, until := range []*nostr.Timestamp{nil, &at} {
			f := nostr.Filter{Kinds: []int{1}, Until: until, Limit: limit}
			var want []*nostr.Event
			for _, evt := range all {
				if f.Matches(evt) {
					want = append(want, evt)
				}
			}
			wantIDs := nip01Order(want)
			wantIDs = wantIDs[:min(limit, len(wantIDs))]
			got, err := tr.QuerySync(context.Background(), f)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(idsOf(got), wantIDs) {
				t.Fatalf("limit %d until %v: got %d events, not the %d of NIP-01's order", limit, until != nil, len(got), len(wantIDs))
			}
		}
	}
}

// Past MaxQueryBytes a query answers fewer events than its limit: the
// first ones of NIP-01's order.
func TestRelay_QueryStopsAtItsByteCeiling(t *testing.T) {
	for _, backend := range testBackends {
		t.Run(backend, func(t *testing.T) { queryStopsAtItsByteCeiling(t, backend) })
	}
}

// A query's byte ceiling bounds what it holds at once, not what it
// answers: 50 events of 10 kB under a 100 kB ceiling all arrive, in
// NIP-01's order (through a crowded second), while the process's query
// budget never held more than about one ceiling.
func queryStopsAtItsByteCeiling(t *testing.T, backend string) {
	const ceiling = 100 << 10
	tr := openBackendRelay(t, backend, Limits{EventsPerSecond: -1, MaxQueryBytes: ceiling})
	at := nostr.Now() - 1000
	all := crowdedStore(t, tr, 40, 10_000, at, true)
	got, err := tr.QuerySync(context.Background(), nostr.Filter{Kinds: []int{1}, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(idsOf(got), nip01Order(all)) {
		t.Fatalf("%d events of %d answered under a %d kB ceiling, or not in NIP-01's order", len(got), len(all), ceiling>>10)
	}
	if peak := queryBudgetOf(tr).peak.Load(); peak == 0 || peak > ceiling+reserveChunk {
		t.Fatalf("the query budget held %d bytes at its peak; want at most the ceiling (%d) and a reserve chunk", peak, ceiling)
	}
	n, err := tr.Count(context.Background(), nostr.Filter{Kinds: []int{1}})
	if err != nil || n != int64(len(all)) {
		t.Fatalf("COUNT = %d, %v; want %d (a count holds no events)", n, err, len(all))
	}
}

// queryBudgetOf is the query budget of tr's backend.
func queryBudgetOf(tr *testRelay) *queryBudget {
	switch b := tr.store.(type) {
	case *store:
		return b.budget
	case *pgBackend:
		return b.budget
	}
	panic("unknown backend")
}

// Past QueryMemory a query is refused with rate-limited, not answered
// short; the budget is given back, so the next small query is answered.
func TestRelay_QueryMemoryRefusesWithRateLimited(t *testing.T) {
	for _, backend := range testBackends {
		t.Run(backend, func(t *testing.T) { queryMemoryRefuses(t, backend) })
	}
}

func queryMemoryRefuses(t *testing.T, backend string) {
	tr := openBackendRelay(t, backend, Limits{EventsPerSecond: -1, QueryMemory: 8 << 10})
	crowdedStore(t, tr, 5, 10_000, nostr.Now()-1000, true)
	_, err := tr.QuerySync(context.Background(), nostr.Filter{Kinds: []int{1}, Limit: 5})
	if p, ok := IsRefusal(err); !ok || p != "rate-limited" {
		t.Fatalf("query past the process's budget: %v, want rate-limited", err)
	}
	if got, err := tr.QuerySync(context.Background(), nostr.Filter{Kinds: []int{1}, Limit: 1, Until: ptr(nostr.Now() - 2000)}); err != nil || len(got) != 0 {
		t.Fatalf("a query with nothing to hold: %d events, %v", len(got), err)
	}
}

func ptr[T any](v T) *T { return &v }

// TestCharge_Grow: a query's own ceiling cuts it (the first hit always
// fits), the process's budget refuses it, and release gives back all.
func TestCharge_Grow(t *testing.T) {
	b := newQueryBudget(100)
	c1, c2 := b.newCharge(80), b.newCharge(80)
	if err := c1.grow(90); err != nil {
		t.Fatalf("first hit: %v", err)
	}
	if err := c1.grow(1); !errors.Is(err, errTooMuch) {
		t.Fatalf("past the query's ceiling: %v", err)
	}
	if err := c2.grow(20); !errors.Is(err, errBusy) {
		t.Fatalf("past the process's budget: %v", err)
	}
	c1.release()
	if err := c2.grow(20); err != nil || b.held.Load() != 20 {
		t.Fatalf("after release: %v, held %d", err, b.held.Load())
	}
}
