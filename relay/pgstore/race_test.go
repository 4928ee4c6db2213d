package pgstore

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/agentnode/agentnode/events"
	"github.com/nbd-wtf/go-nostr"
)

// TestStore_ReplaceableRace: two instances (two stores, two pools) save
// versions of the same replaceable and addressable events concurrently,
// with created_at ties; both then hold exactly one version per address,
// the same one, and it is the NIP-01 winner (newest, ties by lowest id).
func TestStore_ReplaceableRace(t *testing.T) {
	a, url := openTestStore(t)
	b, err := Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	sk := nostr.GeneratePrivateKey()
	pk, _ := nostr.GetPublicKey(sk)
	rng := rand.New(rand.NewPCG(3, 4))
	base := nostr.Now()
	var versions []*nostr.Event
	winner := map[int]*nostr.Event{}
	for i := range 120 {
		kind, tags := 10002, nostr.Tags{}
		if i%2 == 1 {
			kind, tags = 30023, nostr.Tags{{"d", "same"}}
		}
		evt := signed(t, sk, kind, base-nostr.Timestamp(rng.IntN(4)), tags)
		evt.Content = nostr.GeneratePrivateKey()
		evt.Sign(sk)
		versions = append(versions, evt)
		if w := winner[kind]; w == nil || events.Supersedes(evt, w) {
			winner[kind] = evt
		}
	}
	var wg sync.WaitGroup
	for w := range 6 {
		st := []*Store{a, b}[w%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(versions); i += 6 {
				err := st.Save(context.Background(), versions[i])
				if err != nil && err != ErrSuperseded {
					t.Errorf("save: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	for _, st := range []*Store{a, b} {
		for kind, w := range winner {
			got, err := st.Query(context.Background(), nostr.Filter{Kinds: []int{kind}, Authors: []string{pk}})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(idsOf(got), []string{w.ID}) {
				t.Fatalf("kind %d: got %v, want only %s", kind, idsOf(got), w.ID)
			}
		}
	}
}
