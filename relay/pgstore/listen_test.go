package pgstore

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// received collects what a Listener delivers.
type received struct {
	mu   sync.Mutex
	seqs []int64
	ids  []string
}

func (r *received) deliver(seq int64, evt *nostr.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seqs, r.ids = append(r.seqs, seq), append(r.ids, evt.ID)
}

func (r *received) snapshot() ([]int64, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seqs), slices.Clone(r.ids)
}

// runListener runs st's Listener until the test ends and waits for its
// first connection.
func runListener(t *testing.T, st *Store) (*Listener, *received) {
	t.Helper()
	r := &received{}
	l := st.NewListener(r.deliver)
	l.ReconnectDelay = 100 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("listener: %v", err)
		}
	})
	waitFor(t, "listener connected", func() bool { return l.Connects() >= 1 })
	return l, r
}

// waitFor polls cond until it holds or 10 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func saveN(t *testing.T, st *Store, sk string, n int) []string {
	t.Helper()
	var ids []string
	for range n {
		evt := signed(t, sk, 1, nostr.Now(), nil)
		evt.Content = nostr.GeneratePrivateKey() // unique
		if err := evt.Sign(sk); err != nil {
			t.Fatal(err)
		}
		if err := st.Save(context.Background(), evt); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, evt.ID)
	}
	return ids
}

// TestListener_FanOutAcrossReconnect: events saved through store A reach
// store B's Listener in commit order; after B's connection is killed with
// pg_terminate_backend, the events saved meanwhile arrive once each, none
// lost, none repeated.
func TestListener_FanOutAcrossReconnect(t *testing.T) {
	a, url := openTestStore(t)
	b, err := Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	l, r := runListener(t, b)
	sk := nostr.GeneratePrivateKey()

	want := saveN(t, a, sk, 20)
	waitFor(t, "first 20 events", func() bool { _, ids := r.snapshot(); return len(ids) >= len(want) })

	var killed bool
	err = b.pool.QueryRow(context.Background(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE application_name = $1`, ListenerName).Scan(&killed)
	if err != nil || !killed {
		t.Fatalf("terminate listener backend: %v %v", killed, err)
	}
	want = append(want, saveN(t, a, sk, 30)...) // during the gap
	t.Logf("connections when the gap's 30 events were saved: %d", l.Connects())
	waitFor(t, "reconnect", func() bool { return l.Connects() >= 2 })
	// The gap's events come from the catch-up on reconnect, not from a later notification.
	waitFor(t, "the gap's events", func() bool { _, ids := r.snapshot(); return len(ids) >= len(want) })
	want = append(want, saveN(t, a, sk, 5)...) // after it
	waitFor(t, "all events", func() bool { _, ids := r.snapshot(); return len(ids) >= len(want) })

	seqs, ids := r.snapshot()
	if !slices.Equal(ids, want) {
		t.Fatalf("delivered %d events, want %d in save order:\n got %v\nwant %v", len(ids), len(want), ids, want)
	}
	if !slices.IsSorted(seqs) || len(slices.Compact(slices.Clone(seqs))) != len(seqs) {
		t.Fatalf("seqs not strictly increasing: %v", seqs)
	}
}

// TestListener_ConcurrentWriters: two instances save concurrently; a third
// instance's Listener receives every stored event exactly once, in strictly
// increasing commit sequence.
func TestListener_ConcurrentWriters(t *testing.T) {
	a, url := openTestStore(t)
	b, _ := Open(context.Background(), url)
	c, _ := Open(context.Background(), url)
	defer b.Close()
	defer c.Close()
	_, r := runListener(t, c)
	var mu sync.Mutex
	var all []string
	var wg sync.WaitGroup
	for _, st := range []*Store{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids := saveN(t, st, nostr.GeneratePrivateKey(), 50)
			mu.Lock()
			all = append(all, ids...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	waitFor(t, "all events", func() bool { _, ids := r.snapshot(); return len(ids) >= len(all) })
	seqs, ids := r.snapshot()
	if len(ids) != len(all) {
		t.Fatalf("delivered %d, want %d", len(ids), len(all))
	}
	if !slices.IsSorted(seqs) || len(slices.Compact(slices.Clone(seqs))) != len(seqs) {
		t.Fatalf("seqs not strictly increasing")
	}
	slices.Sort(ids)
	slices.Sort(all)
	if !slices.Equal(ids, all) {
		t.Fatalf("delivered set differs from saved set")
	}
}
