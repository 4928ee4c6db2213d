package hostile

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
)

// has reports whether n stores the event id.
func (n *node) has(t *testing.T, c interface {
	Query(context.Context, nostr.Filters) ([]*nostr.Event, error)
}, id string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	evts, err := c.Query(ctx, nostr.Filters{{IDs: []string{id}}})
	if err != nil {
		t.Fatalf("query %s: %v", n.url, err)
	}
	return len(evts) == 1
}

// Issue 23, hints: `agent install <nevent>` on B for a definition that
// lives only on H (not a peer; the nevent names H) installs — B looks it
// up there and stores it; a comment stored on B whose root lesson lives
// only on H (its "E" tag's hint) makes B fetch the lesson.
func TestFederation_installAndCommentsFollowRelayHints(t *testing.T) {
	// Every node here is on 127.0.0.1: B may dial the hints (by default it would not).
	h, b := launchNode(t, launch{}), launchNode(t, launch{config: allowPrivateRelays})
	author, owner, reader := nostr.GeneratePrivateKey(), nostr.GeneratePrivateKey(), nostr.GeneratePrivateKey()
	def := signedBy(t, h, author, 4199, nostr.Tags{{"d", "hinted"}, {"title", "Hinted"}, {"role", "You test."}}, "")
	lesson := signedBy(t, h, author, 4129, nostr.Tags{{"title", "t"}, {"category", "c"}, {"e", def.ID}}, "a lesson")

	nevent, _ := nip19.EncodeEvent(def.ID, []string{h.url}, pubkey(author))
	var res struct {
		Agent struct {
			DefinitionID string `json:"definition_id"`
		}
	}
	cliJSON(t, &res, "agent", "install", nevent, "--owner", pubkey(owner), "--node", "http://"+b.addr, "--data", b.data, "--json")
	if res.Agent.DefinitionID != def.ID {
		t.Fatalf("installed %+v, want definition %s", res.Agent, def.ID)
	}

	bc := b.client(t)
	if b.has(t, bc, lesson.ID) {
		t.Fatal("B holds the lesson before any comment: the test is wrong")
	}
	signedBy(t, b, reader, 1111, nostr.Tags{{"E", lesson.ID, h.url, pubkey(author)}, {"K", "4129"}, {"P", pubkey(author)},
		{"e", lesson.ID, h.url, pubkey(author)}, {"k", "4129"}, {"p", pubkey(author)}}, "a comment")
	deadline := time.Now().Add(20 * time.Second)
	for !b.has(t, bc, lesson.ID) {
		if time.Now().After(deadline) {
			t.Fatalf("B did not fetch the comment's root lesson from %s within 20 s", strings.TrimPrefix(h.url, "ws://"))
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case <-t.Context().Done():
			return
		}
	}
}

// allowPrivateRelays is a --config letting a node dial relays strangers
// name on 127.0.0.1, where every node of these tests listens.
var allowPrivateRelays = map[string]any{"network": map[string]any{"allow_private_relays": true}}

// A comment's root hint (a stranger's choice) naming an address of the
// node's own network is not dialled by default: B logs why, and the
// listener there sees no connection.
func TestFederation_hintToAPrivateAddressIsNotDialled(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	probe := "ws://" + ln.Addr().String()

	b := launchNode(t, launch{logLevel: "info"})
	author, reader := nostr.GeneratePrivateKey(), nostr.GeneratePrivateKey()
	lessonID := strings.Repeat("ab", 32)
	signedBy(t, b, reader, 1111, nostr.Tags{{"E", lessonID, probe, pubkey(author)}, {"K", "4129"}, {"P", pubkey(author)},
		{"e", lessonID, probe, pubkey(author)}, {"k", "4129"}, {"p", pubkey(author)}}, "a comment")
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(b.logs.String(), "relay not dialled") {
		if time.Now().After(deadline) {
			t.Fatalf("B did not refuse the hint %s within 20 s; log:\n%s", probe, b.logs.String())
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case <-t.Context().Done():
			return
		}
	}
	if !strings.Contains(b.logs.String(), "loopback") {
		t.Errorf("the refusal does not say why (loopback):\n%s", b.logs.String())
	}
	if n := conns.Load(); n != 0 {
		t.Fatalf("the hinted address on loopback saw %d connections, want 0", n)
	}
}
