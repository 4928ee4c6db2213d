package relay

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/pgtest"
	"github.com/agentnode/agentnode/internal/relayclient"
	"github.com/agentnode/agentnode/internal/testkit"
)

// TestPostgres_TwoInstances runs two real `agentnode serve --postgres`
// processes on one database and checks that they act as one relay.
func TestPostgres_TwoInstances(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildNode(t)
	t.Run("LiveDeliveryAcrossInstances", func(t *testing.T) { testCrossInstanceDelivery(t, bin) })
	t.Run("ReplaceableRaceConverges", func(t *testing.T) { testReplaceableRace(t, bin) })
	t.Run("SIGKILLUnderLoadLosesNoAck", func(t *testing.T) { testKillUnderLoad(t, bin) })
}

// twoNodes starts two instances on a fresh database.
func twoNodes(t *testing.T, bin string) (url string, a, b *node) {
	url = pgtest.URL(t)
	a = startNodeArgs(t, bin, t.TempDir(), "--postgres", url)
	b = startNodeArgs(t, bin, t.TempDir(), "--postgres", url)
	return url, a, b
}

func dial(t *testing.T, url string) *nostr.Relay {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := nostr.RelayConnect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// testCrossInstanceDelivery: a subscriber on instance A receives every
// event published on instance B (and on A itself), once each, in commit
// order (the order of the OKs of one sequential publisher).
func testCrossInstanceDelivery(t *testing.T, bin string) {
	_, a, b := twoNodes(t, bin)
	sk := nostr.GeneratePrivateKey()
	pk, _ := nostr.GetPublicKey(sk)
	// The subscriber reads with relayclient, which keeps the relay's order:
	// go-nostr's client hands each event to its channel from a goroutine of
	// its own, so two events close together can swap there (it did, once).
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := relayclient.Dial(ctx, a.url, relayclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	sub, err := conn.Subscribe(context.Background(), nostr.Filters{{Authors: []string{pk}, Kinds: []int{1}}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	select {
	case <-sub.EOSE:
	case <-time.After(10 * time.Second):
		t.Fatal("no EOSE")
	}
	pubB, pubA := dial(t, b.url), dial(t, a.url)
	var want []string
	for i := range 40 {
		c := pubB
		if i%5 == 4 {
			c = pubA // this instance's own events come from its Listener too: once
		}
		evt := signedAt(t, sk, 1, nostr.Now(), fmt.Sprintf("cross %d", i))
		mustPublish(t, c, evt)
		want = append(want, evt.ID)
	}
	var got []string
	deadline := time.After(15 * time.Second)
	for len(got) < len(want) {
		select {
		case evt := <-sub.Events:
			got = append(got, evt.ID)
		case <-deadline:
			t.Fatalf("received %d of %d events", len(got), len(want))
		}
	}
	// a last event: anything duplicated would arrive before it
	last := signedAt(t, sk, 1, nostr.Now(), "last")
	mustPublish(t, pubB, last)
	select {
	case evt := <-sub.Events:
		if evt.ID != last.ID {
			t.Fatalf("got %s after all %d events, want the last one (a duplicate?)", evt.ID[:8], len(want))
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the last event did not arrive")
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("event %d: got %s, want %s (commit order)", i, got[i][:8], want[i][:8])
		}
	}
}

func signedAt(t testing.TB, sk string, kind int, ts nostr.Timestamp, content string, tags ...nostr.Tag) *nostr.Event {
	t.Helper()
	evt := &nostr.Event{Kind: kind, CreatedAt: ts, Content: content, Tags: tags}
	if err := evt.Sign(sk); err != nil {
		t.Fatal(err)
	}
	return evt
}

// testReplaceableRace: publishers on both instances race versions of one
// replaceable and one addressable address (created_at ties included); both
// instances then answer exactly the NIP-01 winner of all versions sent.
func testReplaceableRace(t *testing.T, bin string) {
	_, a, b := twoNodes(t, bin)
	sk := nostr.GeneratePrivateKey()
	pk, _ := nostr.GetPublicKey(sk)
	base := nostr.Now() - 1000
	var mu sync.Mutex
	var sent []*nostr.Event
	var wg sync.WaitGroup
	for w := range 6 {
		url := a.url
		if w%2 == 1 {
			url = b.url
		}
		c := dial(t, url)
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 99))
			for i := range 40 {
				ts := base + nostr.Timestamp(rng.IntN(30)) // many ties
				var evt *nostr.Event
				if i%2 == 0 {
					evt = signedAt(t, sk, 10002, ts, fmt.Sprintf("w%d i%d", w, i))
				} else {
					evt = signedAt(t, sk, 30023, ts, fmt.Sprintf("w%d i%d", w, i), nostr.Tag{"d", "race"})
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				err := c.Publish(ctx, *evt)
				cancel()
				if err != nil {
					t.Errorf("publish: %v", err)
					return
				}
				mu.Lock()
				sent = append(sent, evt)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	winner := map[int]*nostr.Event{}
	for _, e := range sent {
		if cur, ok := winner[e.Kind]; !ok || cmp.Or(cmp.Compare(e.CreatedAt, cur.CreatedAt), cmp.Compare(cur.ID, e.ID)) > 0 {
			winner[e.Kind] = e
		}
	}
	for _, n := range []*node{a, b} {
		c := dial(t, n.url)
		for kind, want := range winner {
			got := queryWS(t, c, nostr.Filter{Kinds: []int{kind}, Authors: []string{pk}})
			if len(got) != 1 || got[0].ID != want.ID {
				t.Fatalf("%s kind %d: %d events (first %v), want only the winner %s", n.url, kind, len(got), firstID(got), want.ID[:8])
			}
		}
	}
}

func firstID(evts []*nostr.Event) string {
	if len(evts) == 0 {
		return "-"
	}
	return evts[0].ID[:8]
}

// testKillUnderLoad: publishers write to both instances while instance B
// is killed with SIGKILL (at a random number of acknowledgements), three
// times; every event answered OK true by either is then stored, as seen
// from A and from the restarted B.
func testKillUnderLoad(t *testing.T, bin string) {
	url, a, b := twoNodes(t, bin)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 15))
	acked := newAckSet()
	for round := range 3 {
		before := acked.len()
		stopA := publishUntilStopped(a.url, acked, 2, 8)
		stopB := publishUntilStopped(b.url, acked, 4, 8)
		target := before + 200 + rng.IntN(1500) // the random moment of the kill
		testkit.WaitFor(t, 30*time.Second, fmt.Sprintf("round %d: %d acknowledgements", round, target), func() bool { return acked.len() >= target })
		b.kill(t)
		stopB()
		stopA()
		verifyAcked(t, a.url, acked, round)
		b = startNodeArgs(t, bin, t.TempDir(), "--postgres", url)
		verifyAcked(t, b.url, acked, round)
		t.Logf("round %d: %d events acknowledged so far", round, acked.len())
	}
}
