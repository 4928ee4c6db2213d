package relay

import (
	"context"
	"fmt"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// Regression tests for defects of the pinned eventstore/lmdb found by the
// differential test (docs/RELAY.md lists them all).

func storeAt(t *testing.T, tr *testRelay, sk string, kind int, at nostr.Timestamp, tags nostr.Tags) *nostr.Event {
	t.Helper()
	e := &nostr.Event{Kind: kind, CreatedAt: at, Tags: tags, Content: "{}"}
	if err := e.Sign(sk); err != nil {
		t.Fatal(err)
	}
	if err := tr.Publish(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	return e
}

func TestStore_RepeatedFilterValuesReturnEachEventOnce(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{})
	sk := nostr.GeneratePrivateKey()
	pub, _ := nostr.GetPublicKey(sk)
	storeAt(t, tr, sk, 4199, nostr.Now()-1, nostr.Tags{{"title", "a"}})
	storeAt(t, tr, sk, 4199, nostr.Now(), nostr.Tags{{"title", "b"}})
	got, err := tr.QuerySync(context.Background(), nostr.Filter{Kinds: []int{4199, 4199}, Authors: []string{pub, pub}})
	if err != nil || len(got) != 2 {
		t.Fatalf("got %d events (%v), want 2", len(got), err)
	}
}

func TestStore_PTagWithoutKindsIsNewestFirstAcrossKinds(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{})
	sk := nostr.GeneratePrivateKey()
	target := fmt.Sprintf("%064x", 42)
	now := nostr.Now()
	newest := storeAt(t, tr, sk, 1, now, nostr.Tags{{"p", target}}) // low kind, newest
	storeAt(t, tr, sk, 1111, now-100, nostr.Tags{{"p", target}})    // high kind, old
	older := storeAt(t, tr, sk, 1111, now-50, nostr.Tags{{"p", target}})
	got, _ := tr.QuerySync(context.Background(), nostr.Filter{Tags: nostr.TagMap{"p": {target}}, Limit: 2})
	if len(got) != 2 || got[0].ID != newest.ID || got[1].ID != older.ID {
		t.Fatalf("got %v, want the two newest across kinds", ids(got))
	}
	since := now - 60
	got, _ = tr.QuerySync(context.Background(), nostr.Filter{Tags: nostr.TagMap{"p": {target}}, Since: &since})
	if len(got) != 2 {
		t.Fatalf("since across kinds: got %d, want 2", len(got))
	}
}

func TestStore_TagPrefixCollisionsDoNotStarveResults(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{})
	sk := nostr.GeneratePrivateKey()
	def := "00000000000000001111111111111111111111111111111111111111111111111"[:64]
	decoy := "00000000000000002222222222222222222222222222222222222222222222222"[:64]
	now := nostr.Now()
	want := storeAt(t, tr, sk, 4129, now-100, nostr.Tags{{"title", "real"}, {"e", def}})
	for i := range 30 { // newer events whose e shares the first 8 bytes
		storeAt(t, tr, sk, 4129, now-nostr.Timestamp(i), nostr.Tags{{"title", "decoy"}, {"e", decoy}})
	}
	got, _ := tr.QuerySync(context.Background(), nostr.Filter{Kinds: []int{4129}, Tags: nostr.TagMap{"e": {def}}, Limit: 5})
	if len(got) != 1 || got[0].ID != want.ID {
		t.Fatalf("got %d events, want exactly the one lesson of the definition", len(got))
	}
}
