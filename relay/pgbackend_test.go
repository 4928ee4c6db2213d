package relay

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/pgtest"
	"github.com/agentnode/agentnode/internal/testkit"
)

// hookLog collects what an OnStored hook saw.
type hookLog struct {
	mu  sync.Mutex
	ids []string
}

func (h *hookLog) add(evt *nostr.Event) { h.mu.Lock(); h.ids = append(h.ids, evt.ID); h.mu.Unlock() }
func (h *hookLog) all() []string        { h.mu.Lock(); defer h.mu.Unlock(); return slices.Clone(h.ids) }

// TestPostgres_OnStoredAcrossRelays: two relays on one database. Each
// one's OnStored sees the events stored through either, once each, in
// commit order; an event published through a relay has reached that
// relay's hook when Publish returns; a deletion published through one
// relay refuses a re-publish through the other.
func TestPostgres_OnStoredAcrossRelays(t *testing.T) {
	url := pgtest.URL(t)
	a := openTestRelayConfig(t, Config{Postgres: url, Version: "test"})
	b := openTestRelayConfig(t, Config{Postgres: url, Version: "test"})
	var seenA, seenB hookLog
	defer a.OnStored(seenA.add)()
	defer b.OnStored(seenB.add)()
	ctx := context.Background()
	sk := nostr.GeneratePrivateKey()
	var want []string
	for i := range 30 {
		r := a
		if i%3 == 0 {
			r = b
		}
		evt := signedAt(t, sk, 1, nostr.Now(), "hook "+strings.Repeat("x", i))
		if err := r.Publish(ctx, evt); err != nil {
			t.Fatal(err)
		}
		mine := seenA.all()
		if r == b {
			mine = seenB.all()
		}
		if !slices.Contains(mine, evt.ID) {
			t.Fatalf("event %d: not announced by its own relay when Publish returned", i)
		}
		want = append(want, evt.ID)
	}
	for name, h := range map[string]*hookLog{"a": &seenA, "b": &seenB} {
		testkit.WaitFor(t, 10*time.Second, fmt.Sprintf("relay %s: OnStored to see %d events", name, len(want)), func() bool { return len(h.all()) >= len(want) })
		if got := h.all(); !slices.Equal(got, want) {
			t.Fatalf("relay %s: OnStored saw %d events, not exactly the %d published in order", name, len(got), len(want))
		}
	}
	target := signedAt(t, sk, 1, nostr.Now(), "to be deleted")
	if err := a.Publish(ctx, target); err != nil {
		t.Fatal(err)
	}
	del := signedAt(t, sk, 5, nostr.Now(), "", nostr.Tag{"e", target.ID})
	if err := a.Publish(ctx, del); err != nil {
		t.Fatal(err)
	}
	if err := b.Publish(ctx, target); err == nil || !strings.HasPrefix(err.Error(), "blocked:") {
		t.Fatalf("re-publish of a deleted event through the other relay: %v, want blocked:", err)
	}
	if got, _ := b.QuerySync(ctx, nostr.Filter{IDs: []string{target.ID}}); len(got) != 0 {
		t.Fatal("the deleted event is still served by the other relay")
	}
}

// TestPostgres_EphemeralAcrossRelays: an ephemeral event accepted by one
// relay reaches the other relay's OnEphemeral listeners and live
// subscribers, and its own relay's listeners once (not again from the
// database).
func TestPostgres_EphemeralAcrossRelays(t *testing.T) {
	url := pgtest.URL(t)
	a := openTestRelayConfig(t, Config{Postgres: url, Version: "test", RestrictedKinds: []int{}})
	b := openTestRelayConfig(t, Config{Postgres: url, Version: "test", RestrictedKinds: []int{}})
	var onA, onB hookLog
	defer a.OnEphemeral(onA.add)()
	defer b.OnEphemeral(onB.add)()
	sk := nostr.GeneratePrivateKey()
	pk, _ := nostr.GetPublicKey(sk)
	sub, err := b.connect(t).Subscribe(context.Background(), nostr.Filters{{Kinds: []int{20001}, Authors: []string{pk}}})
	if err != nil {
		t.Fatal(err)
	}
	<-sub.EndOfStoredEvents
	evt := signedAt(t, sk, 20001, nostr.Now(), "ephemeral")
	if err := a.Publish(context.Background(), evt); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-sub.Events:
		if got.ID != evt.ID {
			t.Fatalf("subscriber on b got %s", got.ID)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the ephemeral event did not reach b's subscriber")
	}
	testkit.WaitFor(t, 10*time.Second, "b's OnEphemeral to see the event", func() bool { return len(onB.all()) == 1 })
	// a sentinel through b: once it is back on a, a's own event would have been too
	sentinel := signedAt(t, sk, 20001, nostr.Now(), "sentinel")
	if err := b.Publish(context.Background(), sentinel); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 10*time.Second, "a's OnEphemeral to see its own event and b's", func() bool { return len(onA.all()) >= 2 })
	if got := onA.all(); !slices.Equal(got, []string{evt.ID, sentinel.ID}) {
		t.Fatalf("a's OnEphemeral saw %d events, want exactly its own once then b's", len(got))
	}
}

// TestPostgres_DataDirLocked: in Postgres mode the data directory is still
// locked (the daemon's files live there): a second relay on it is refused.
func TestPostgres_DataDirLocked(t *testing.T) {
	url, dir := pgtest.URL(t), t.TempDir()
	openTestRelayConfig(t, Config{Postgres: url, DataDir: dir, Version: "test"})
	if _, err := Open(context.Background(), Config{Postgres: url, DataDir: dir, Version: "test"}); !errors.Is(err, ErrDataDirInUse) {
		t.Fatalf("second relay on the data dir: %v, want ErrDataDirInUse", err)
	}
}

// TestPostgres_PurgeExpired: the purge the backend runs every
// pgPurgeEvery deletes exactly the expired events.
func TestPostgres_PurgeExpired(t *testing.T) {
	tr := openTestRelayConfig(t, Config{Postgres: pgtest.URL(t), Version: "test"})
	b := tr.store.(*pgBackend)
	sk := nostr.GeneratePrivateKey()
	ctx := context.Background()
	past := strconv.FormatInt(int64(nostr.Now())-10, 10)
	expired := signedAt(t, sk, 1, nostr.Now()-20, "gone", nostr.Tag{"expiration", past})
	kept := signedAt(t, sk, 1, nostr.Now(), "kept")
	if _, err := b.pg.SaveBatch(ctx, []*nostr.Event{expired, kept}); err != nil { // past the relay's RejectExpired
		t.Fatal(err)
	}
	if n := b.purge(ctx); n != 1 {
		t.Fatalf("purged %d events, want 1", n)
	}
	if got, _ := tr.QuerySync(ctx, nostr.Filter{IDs: []string{kept.ID}}); len(got) != 1 {
		t.Fatal("the unexpired event was purged")
	}
}
