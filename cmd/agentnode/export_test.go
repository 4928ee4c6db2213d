package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// memRelay answers filters like a relay (newest first, ties by id, capped
// at its own page size, 0: none): the oracle exportPaged pages through.
type memRelay struct {
	evts []*nostr.Event
	cap  int
}

func (r memRelay) query(_ context.Context, f nostr.Filter) ([]*nostr.Event, error) {
	var out []*nostr.Event
	for _, e := range r.evts {
		if f.Matches(e) {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b *nostr.Event) int {
		if a.CreatedAt != b.CreatedAt {
			return int(b.CreatedAt) - int(a.CreatedAt)
		}
		return strings.Compare(a.ID, b.ID)
	})
	if r.cap > 0 {
		out = out[:min(len(out), r.cap)]
	}
	return out[:min(len(out), f.Limit)], nil
}

func memEvents(n, sameSecond int) []*nostr.Event {
	var evts []*nostr.Event
	for i := range n {
		at := nostr.Timestamp(1_000_000 - i)
		if i < sameSecond {
			at = 2_000_000
		}
		evts = append(evts, &nostr.Event{ID: fmt.Sprintf("%064x", i), CreatedAt: at, Kind: 1})
	}
	return evts
}

func TestExportPaged_everyEventOnceAcrossSharedSeconds(t *testing.T) {
	for _, c := range []struct{ n, same, cap int }{{2000, 0, 500}, {2000, 300, 500}, {1200, 499, 500}, {700, 100, 100}, {3, 3, 500}, {1000, 600, 5000}, {1000, 1000, 5000}, {150, 150, 100}, {1000, 600, 0}} {
		r := memRelay{evts: memEvents(c.n, c.same), cap: c.cap}
		seen := map[string]int{}
		err := exportPaged(context.Background(), r.query, nostr.Filter{}, r.cap, func(e *nostr.Event) error { seen[e.ID]++; return nil })
		if c.cap > 0 && c.same >= c.cap {
			if !errors.Is(err, errStuck) {
				t.Errorf("%+v: %v, want errStuck", c, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if len(seen) != c.n {
			t.Errorf("%+v: exported %d distinct events, want %d", c, len(seen), c.n)
		}
		for id, k := range seen {
			if k != 1 {
				t.Fatalf("%+v: %s exported %d times", c, id, k)
			}
		}
	}
}

func TestExportPaged_stuckOnAFullSecondSaysSo(t *testing.T) {
	r := memRelay{evts: memEvents(1000, 600), cap: 500}
	err := exportPaged(context.Background(), r.query, nostr.Filter{}, r.cap, func(*nostr.Event) error { return nil })
	if !errors.Is(err, errStuck) || !strings.Contains(err.Error(), "--data") {
		t.Fatalf("600 events in one second, pages of 500: %v, want errStuck naming --data", err)
	}
}

func TestExportPaged_limit(t *testing.T) {
	r := memRelay{evts: memEvents(2000, 0), cap: 500}
	n := 0
	if err := exportPaged(context.Background(), r.query, nostr.Filter{Limit: 777}, r.cap, func(*nostr.Event) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 777 {
		t.Fatalf("limit 777 exported %d", n)
	}
}

func TestReadLine_boundsAndLastLine(t *testing.T) {
	in := "short\n" + strings.Repeat("x", 300) + "\n\nlast"
	r := bufio.NewReaderSize(strings.NewReader(in), 16)
	var got []string
	for {
		line, err := readLine(r, 100)
		if errors.Is(err, errLineTooLong) {
			got = append(got, "TOO LONG")
			continue
		}
		if err != nil {
			break
		}
		got = append(got, string(line))
	}
	if want := []string{"short", "TOO LONG", "", "last"}; !slices.Equal(got, want) {
		t.Fatalf("lines %q, want %q", got, want)
	}
}
