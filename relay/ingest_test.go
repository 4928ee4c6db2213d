package relay

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/relay/internal/lmdbw"
)

// TestRelay_ConcurrentPublishersAllDurable sends events from several
// websocket connections at once, many in flight on each, and checks that
// every event answered OK true is stored, and once.
func TestRelay_ConcurrentPublishersAllDurable(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{EventsPerSecond: -1})
	const conns, perConn = 4, 60
	var mu sync.Mutex
	var okIDs []string
	var wg sync.WaitGroup
	for c := range conns {
		client := tr.connect(t)
		sk := nostr.GeneratePrivateKey()
		for i := range perConn {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e := signed(t, sk, 1, nostr.Tags{{"t", "ingest"}}, fmt.Sprintf("conn %d event %d", c, i))
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if err := client.Publish(ctx, *e); err != nil {
					t.Errorf("publish: %v", err)
					return
				}
				mu.Lock()
				okIDs = append(okIDs, e.ID)
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	if len(okIDs) != conns*perConn {
		t.Fatalf("%d of %d events acknowledged", len(okIDs), conns*perConn)
	}
	got, err := tr.QuerySync(context.Background(), nostr.Filter{Kinds: []int{1}, Limit: 5000})
	if err != nil {
		t.Fatal(err)
	}
	var gotIDs []string
	for _, e := range got {
		gotIDs = append(gotIDs, e.ID)
	}
	slices.Sort(gotIDs)
	slices.Sort(okIDs)
	if !slices.Equal(gotIDs, okIDs) {
		t.Fatalf("stored %d events, acknowledged %d: sets differ", len(gotIDs), len(okIDs))
	}
}

// TestRelay_LiveBroadcastFollowsCommitOrder publishes concurrently and
// checks that a live subscriber (read off a raw websocket: go-nostr's
// client hands events over on one goroutine each, so it may reorder them)
// sees the events in the order the writer committed them (the order
// OnStored reports), each once.
func TestRelay_LiveBroadcastFollowsCommitOrder(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{EventsPerSecond: -1})
	var mu sync.Mutex
	var committed []string
	defer tr.OnStored(func(e *nostr.Event) {
		mu.Lock()
		committed = append(committed, e.ID)
		mu.Unlock()
	})()
	conn, _, err := websocket.DefaultDialer.Dial(tr.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	if err := conn.WriteMessage(websocket.TextMessage, []byte(`["REQ","live",{"kinds":[1]}]`)); err != nil {
		t.Fatal(err)
	}
	readRaw(t, conn) // EOSE
	const publishers, each = 8, 40
	var wg sync.WaitGroup
	for p := range publishers {
		sk := nostr.GeneratePrivateKey()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := tr.Publish(context.Background(), signed(t, sk, 1, nil, fmt.Sprintf("p%d e%d", p, i))); err != nil {
					t.Errorf("publish: %v", err)
				}
			}
		}()
	}
	var live []string
	for len(live) < publishers*each {
		env, ok := readRaw(t, conn).(*nostr.EventEnvelope)
		if !ok {
			t.Fatal("expected only EVENT messages")
		}
		live = append(live, env.Event.ID)
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(live, committed) {
		t.Fatalf("live order differs from commit order (%d live, %d committed)", len(live), len(committed))
	}
}

// readRaw reads and parses one relay message.
func readRaw(t *testing.T, conn *websocket.Conn) nostr.Envelope {
	t.Helper()
	_, msg, err := conn.ReadMessage()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	env := parseFrame(msg)
	if env == nil {
		t.Fatalf("unparsable message %s", msg)
	}
	return env
}

// TestRelay_DeletionAndTargetInFlightTogether sends a note and its
// deletion without waiting between them, many times: whatever order they
// reach the writer in, the note must not remain stored.
func TestRelay_DeletionAndTargetInFlightTogether(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{EventsPerSecond: -1})
	c := tr.connect(t)
	sk := nostr.GeneratePrivateKey()
	var notes []string
	var wg sync.WaitGroup
	for i := range 40 {
		note := signed(t, sk, 1, nil, fmt.Sprintf("short-lived %d", i))
		del := signed(t, sk, 5, nostr.Tags{{"e", note.ID}}, "")
		notes = append(notes, note.ID)
		for _, e := range []*nostr.Event{note, del} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				publishWS(t, c, e) // the note may be refused as deleted: either is fine
			}()
		}
	}
	wg.Wait()
	left, err := tr.QuerySync(context.Background(), nostr.Filter{IDs: notes})
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Fatalf("%d deleted notes are still stored", len(left))
	}
	dels, _ := tr.QuerySync(context.Background(), nostr.Filter{Kinds: []int{5}, Limit: 100})
	if len(dels) != 40 {
		t.Fatalf("%d deletions stored, want 40", len(dels))
	}
}

// TestRelay_UnstorableEventIsRefusedAlone: an event the store's encoding
// cannot hold (content over 65,535 bytes, within the relay's content
// limit) is refused as invalid, and the events committed with it are not.
func TestRelay_UnstorableEventIsRefusedAlone(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{EventsPerSecond: -1})
	sk := nostr.GeneratePrivateKey()
	big := signed(t, sk, 1, nil, strings.Repeat("x", 70_000))
	small := signed(t, sk, 1, nil, "fits")
	var wg sync.WaitGroup
	var bigErr, smallErr error
	wg.Add(2)
	go func() { defer wg.Done(); bigErr = tr.Publish(context.Background(), big) }()
	go func() { defer wg.Done(); smallErr = tr.Publish(context.Background(), small) }()
	wg.Wait()
	if p, ok := IsRefusal(bigErr); !ok || p != "invalid" {
		t.Fatalf("big event: %v, want an invalid: refusal", bigErr)
	}
	if smallErr != nil {
		t.Fatalf("small event: %v", smallErr)
	}
	got, _ := tr.QuerySync(context.Background(), nostr.Filter{IDs: []string{big.ID, small.ID}})
	if len(got) != 1 || got[0].ID != small.ID {
		t.Fatalf("stored %d events, want only the small one", len(got))
	}
}

// TestIngester_BatchesGrowWithTheQueue holds the first commit until 99
// more events are queued behind it: the writer must then take all 99 in
// one transaction. The first, alone, is committed without waiting for
// company.
func TestIngester_BatchesGrowWithTheQueue(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{EventsPerSecond: -1})
	g := tr.store.(*store).ingest
	release := make(chan struct{})
	var mu sync.Mutex
	var sizes []int
	commit := g.commit
	g.commit = func(ops []*lmdbw.Op) error {
		mu.Lock()
		first := len(sizes) == 0
		sizes = append(sizes, len(ops))
		mu.Unlock()
		if first {
			<-release
		}
		return commit(ops)
	}
	sk := nostr.GeneratePrivateKey()
	var wg sync.WaitGroup
	publish := func(i int) {
		defer wg.Done()
		if err := tr.Publish(context.Background(), signed(t, sk, 1, nil, fmt.Sprintf("queued %d", i))); err != nil {
			t.Errorf("publish: %v", err)
		}
	}
	wg.Add(1)
	go publish(0)
	testkit.WaitFor(t, 5*time.Second, "the lone event committed", func() bool { mu.Lock(); defer mu.Unlock(); return len(sizes) == 1 })
	for i := 1; i < 100; i++ {
		wg.Add(1)
		go publish(i)
	}
	testkit.WaitFor(t, 10*time.Second, "99 events queued", func() bool { return len(g.in) == 99 })
	close(release)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(sizes, []int{1, 99}) {
		t.Fatalf("batch sizes %v, want [1 99]", sizes)
	}
}

// parseFrame is a relay frame's envelope, nil when it does not parse.
func parseFrame(frame []byte) nostr.Envelope {
	env, err := nostr.NewMessageParser().ParseMessage(string(frame))
	if err != nil {
		return nil
	}
	return env
}
