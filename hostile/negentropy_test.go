package hostile

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip77"
	"github.com/nbd-wtf/go-nostr/nip77/negentropy"
	"github.com/nbd-wtf/go-nostr/nip77/negentropy/storage/empty"
)

// seedIDs stores count kind-1 notes of one key and returns their ids.
func seedIDs(t *testing.T, n *node, count int) []string {
	t.Helper()
	c := n.client(t)
	sk := nostr.GeneratePrivateKey()
	ids := make([]string, 0, count)
	for i := range count {
		evt, err := publish(c, sk, 1, nil, "note "+strings.Repeat("x", i%50)+string(rune('a'+i%26)), 30*time.Second)
		if err != nil {
			t.Fatalf("seed: %v", err)
		}
		ids = append(ids, evt.ID)
	}
	slices.Sort(ids)
	return ids
}

// NIP-77 used to get "unknown envelope label" and go-nostr's client (and
// nak sync) hung; now go-nostr's FetchIDsOnly lists the node's events.
func TestNegentropy_goNostrClientListsTheNodesEvents(t *testing.T) {
	n := startNode(t, nil)
	want := seedIDs(t, n, 150)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ch, err := nip77.FetchIDsOnly(ctx, n.url, nostr.Filter{Kinds: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		select {
		case id, ok := <-ch:
			if !ok {
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Fatalf("FetchIDsOnly listed %d ids, want the %d stored", len(got), len(want))
				}
				return
			}
			got = append(got, id)
		case <-ctx.Done():
			t.Fatalf("no NIP-77 answer within 20 s (%d ids so far)", len(got))
		}
	}
}

// A stranger cannot make the node hold the store in memory through NIP-77:
// a session over more events than negentropy_max_items is refused, sessions
// per connection and events held across connections are capped, each with
// a NEG-ERR that says which bound; ordinary clients keep being served.
func TestNegentropy_strangersSessionsAreBounded(t *testing.T) {
	n := startNode(t, map[string]any{"negentropy_max_items": 100, "negentropy_max_held_items": 250, "negentropy_max_sessions": 2})
	ids := seedIDs(t, n, 120)
	first := negentropy.New(empty.Empty{}, 0).Start()

	a := dialRaw(t, n, 0)
	a.send(t, "NEG-OPEN", "all", nostr.Filter{}, first)
	negErr(t, a, "all", "blocked: more than 100 events match")
	a.send(t, "NEG-OPEN", "s1", nostr.Filter{Limit: 90}, first)
	a.next(t, 20*time.Second, "NEG-MSG", "s1")
	a.send(t, "NEG-OPEN", "s2", nostr.Filter{Limit: 90}, first)
	a.next(t, 20*time.Second, "NEG-MSG", "s2")
	a.send(t, "NEG-OPEN", "s3", nostr.Filter{Limit: 10}, first)
	negErr(t, a, "s3", "blocked: too many open negentropy sessions")

	b := dialRaw(t, n, 0)
	b.send(t, "NEG-OPEN", "x", nostr.Filter{Limit: 90}, first)
	negErr(t, b, "x", "rate-limited:")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := n.client(t).Query(ctx, nostr.Filters{{IDs: ids[:5]}})
	if err != nil || len(got) != 5 {
		t.Fatalf("an ordinary read during the syncs: %d events, %v", len(got), err)
	}
	a.send(t, "NEG-CLOSE", "s1")
	a.send(t, "NEG-CLOSE", "s2")
	// The closes free the budget (they are handled concurrently with b's
	// messages, so b retries until they have been).
	deadline := time.Now().Add(20 * time.Second)
	for {
		b.send(t, "NEG-OPEN", "y", nostr.Filter{Limit: 90}, first)
		label, reason := negAnswer(t, b, "y")
		if label == "NEG-MSG" {
			break
		}
		if !strings.HasPrefix(reason, "rate-limited:") || time.Now().After(deadline) {
			t.Fatalf("after NEG-CLOSE: %s %q", label, reason)
		}
	}
}

// negAnswer reads until a NEG-MSG or NEG-ERR for id: its label and, for
// NEG-ERR, the reason.
func negAnswer(t *testing.T, c rawConn, id string) (label, reason string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	for {
		_, b, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("waiting for the answer to %s: %v", id, err)
		}
		var msg []string
		jsonStrings(b, &msg)
		if len(msg) == 3 && msg[1] == id && (msg[0] == "NEG-MSG" || msg[0] == "NEG-ERR") {
			return msg[0], msg[2]
		}
	}
}

// negErr reads until ["NEG-ERR", id, reason] and checks the reason.
func negErr(t *testing.T, c rawConn, id, prefix string) {
	t.Helper()
	msg := c.next(t, 20*time.Second, "NEG-ERR", id)
	if len(msg) < 3 || !strings.HasPrefix(str(msg[2]), prefix) {
		t.Fatalf("got %s, want NEG-ERR %q…", msg, prefix)
	}
}
