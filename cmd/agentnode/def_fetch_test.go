package main

import (
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"

	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/relay"
)

// def fetch copies a definition published on another relay to this node's
// relay with its author's signature intact, by id or by npub:slug (the
// latest version); afterwards this node's relay serves the same event.
func TestDefFetch_CopiesFromAnotherRelay(t *testing.T) {
	home, other := openTestNode(t, relay.Limits{}), openTestNode(t, relay.Limits{})
	skKey := testkit.NewKey(t)
	sk, pk := skKey.SK, skKey.PK
	old := publishDef(t, other, sk, "--title", "Planner", "--slug", "planner", "--ver", "1")
	newer := signed(t, sk, nostr.Event{Kind: 4199, CreatedAt: old.CreatedAt + 10,
		Tags: nostr.Tags{{"d", "planner"}, {"title", "Planner"}, {"ver", "2"}}})
	other.publishDirect(t, newer)
	author, _ := nip19.EncodePublicKey(pk)

	var res fetchResult
	decodeJSON(t, home.run(t, "", "def", "fetch", author+":planner", "--from", other.URL, "--json"), &res)
	if res.ID != newer.ID || len(res.Accepted) != 1 || res.Accepted[0] != home.URL {
		t.Fatalf("fetch by npub:slug = %+v, want the latest version %s stored on %s", res, newer.ID, home.URL)
	}
	home.run(t, "", "def", "fetch", old.ID, "--from", other.URL)
	for _, want := range []*nostr.Event{old, newer} {
		got := home.query(t, eventFilter(want.ID))
		if len(got) != 1 || got[0].Sig != want.Sig || got[0].Content != want.Content {
			t.Errorf("home relay holds %v, want the author's event %s unchanged", got, want.ID)
		}
	}

	if r := home.try(t, "", "def", "fetch", old.ID); r.err == nil || !strings.Contains(r.err.Error(), "--from") {
		t.Errorf("fetch without --from: %v, want a usage error naming --from", r.err)
	}
	if r := home.try(t, "", "def", "fetch", strings.Repeat("ab", 32), "--from", other.URL); r.err == nil {
		t.Error("fetching a definition no relay has succeeded")
	}
}
