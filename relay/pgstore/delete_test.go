package pgstore

import (
	"context"
	"errors"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// TestStore_Deletions checks NIP-09 inside SaveBatch: a kind 5 event
// removes its author's targets ("e" ids, "a" addresses up to its
// created_at), a deleted event stays deleted when re-sent (also in the
// same batch), a newer version of a deleted address is stored, and a
// foreign author's deletion removes nothing.
func TestStore_Deletions(t *testing.T) {
	st, _ := openTestStore(t)
	ctx := context.Background()
	sk, other := nostr.GeneratePrivateKey(), nostr.GeneratePrivateKey()
	pk, _ := nostr.GetPublicKey(sk)
	now := nostr.Now()
	mk := func(key string, kind int, ts nostr.Timestamp, tags nostr.Tags) *nostr.Event {
		evt := &nostr.Event{Kind: kind, CreatedAt: ts, Tags: tags, Content: "x"}
		if err := evt.Sign(key); err != nil {
			t.Fatal(err)
		}
		return evt
	}
	note := mk(sk, 1, now-10, nil)
	art := mk(sk, 30023, now-10, nostr.Tags{{"d", "a"}})
	foreign := mk(other, 1, now-10, nil)
	addr := "30023:" + pk + ":a"
	del := mk(sk, 5, now-5, nostr.Tags{{"e", note.ID}, {"a", addr}, {"e", foreign.ID}})
	later := mk(sk, 1, now-4, nil)
	delLater := mk(sk, 5, now-3, nostr.Tags{{"e", later.ID}})
	res, err := st.SaveBatch(ctx, []*nostr.Event{note, art, foreign, del, later, delLater, later})
	if err != nil {
		t.Fatal(err)
	}
	want := []error{nil, nil, nil, nil, nil, nil, ErrDeleted}
	for i := range want {
		if !errors.Is(res[i], want[i]) {
			t.Fatalf("result %d = %v, want %v", i, res[i], want[i])
		}
	}
	got, err := st.Query(ctx, nostr.Filter{Kinds: []int{1, 30023}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != foreign.ID {
		t.Fatalf("after deletion: %d events, want only the foreign one", len(got))
	}
	oldArt := mk(sk, 30023, now-6, nostr.Tags{{"d", "a"}})
	newArt := mk(sk, 30023, now-1, nostr.Tags{{"d", "a"}})
	for _, c := range []struct {
		evt  *nostr.Event
		want error
	}{{note, ErrDeleted}, {art, ErrDeleted}, {oldArt, ErrDeleted}, {newArt, nil}, {del, ErrDuplicate}} {
		if err := st.Save(ctx, c.evt); !errors.Is(err, c.want) {
			t.Fatalf("re-save kind %d at %d: %v, want %v", c.evt.Kind, c.evt.CreatedAt, err, c.want)
		}
	}
}
