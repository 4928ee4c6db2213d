package peers_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/peers"
	"github.com/agentnode/agentnode/internal/testkit"
)

// lookups is the local relay, counting the id lookups the syncer makes.
type lookups struct {
	*hooked
	byID atomic.Int64
}

func (l *lookups) QuerySync(ctx context.Context, f nostr.Filter) ([]*nostr.Event, error) {
	if len(f.IDs) > 0 {
		l.byID.Add(1)
	}
	return l.hooked.QuerySync(ctx, f)
}

// An event already stored is found by its id and not verified again; a
// new one is verified and stored; an event that claims a stored event's
// id with another body is refused, and the stored event is untouched.
func TestSyncer_DuplicatesAreNotVerifiedAgain(t *testing.T) {
	a := openNode(t, t.TempDir(), nil)
	author, agent := testkit.NewKey(t), testkit.NewKey(t)
	def := definition(t, author, "def")
	stored := lesson(t, agent, def.ID, "already here", nostr.Now()-20)
	fresh := lesson(t, agent, def.ID, "new here", nostr.Now()-10)
	forged := *stored
	forged.Content = "the stored event's id and signature over another body"
	if err := a.Relay.Publish(context.Background(), stored); err != nil { // not notified: found by the store lookup
		t.Fatal(err)
	}
	fake := openFakePeer(t, stored, fresh, &forged)

	s := peers.New(peers.Config{
		Peers: []string{fake.URL}, Local: a, Backoff: fast, Logger: testLogger(t),
		Interests: filters(lessonsOf(def.ID)),
	})
	run(t, s)
	// A reconnect replays the catch-up: the counts of copies are lower
	// bounds, but the fresh lesson is verified once whatever happens.
	testkit.WaitFor(t, testWait, "the fresh lesson stored, the stored one a duplicate, the forgery refused", func() bool {
		st := s.Status()[0]
		return a.has(t, fresh.ID) && st.Duplicates >= 1 && st.Refused >= 1
	})
	if st := s.Status()[0]; st.Verified != 1 {
		t.Errorf("Verified = %d, want 1 (the fresh lesson only): %+v", st.Verified, st)
	}
	got, err := a.QuerySync(context.Background(), nostr.Filter{IDs: []string{stored.ID}})
	if err != nil || len(got) != 1 || got[0].Content != stored.Content {
		t.Errorf("the stored event's id holds %v (%v)", got, err)
	}
}

// The copy a second peer delivers of an event the first one delivered is
// recognised by the recently-seen set: no signature check, no store lookup.
func TestSyncer_CopiesFromAnotherPeerCostNothing(t *testing.T) {
	a := &lookups{hooked: openNode(t, t.TempDir(), nil).hooked}
	author, agent := testkit.NewKey(t), testkit.NewKey(t)
	def := definition(t, author, "def")
	evt := lesson(t, agent, def.ID, "delivered twice", nostr.Now())
	first, second := openFakePeer(t, evt), openFakePeer(t)

	s := peers.New(peers.Config{
		Peers: []string{first.URL, second.URL}, Local: a, Backoff: fast, Logger: testLogger(t),
		Interests: filters(lessonsOf(def.ID)),
	})
	run(t, s)
	testkit.WaitFor(t, testWait, "the first peer's copy is stored", func() bool {
		return has(t, a.Relay, evt.ID) && s.Status()[0].Verified == 1
	})
	before := a.byID.Load()
	// Until the second peer's live subscription is up a broadcast reaches
	// nobody: send the copy again at every poll.
	testkit.WaitFor(t, testWait, "the second peer's copy is taken as a duplicate", func() bool {
		second.broadcast(evt)
		return s.Status()[1].Duplicates >= 1
	})
	st := s.Status()
	if st[0].Verified+st[1].Verified != 1 {
		t.Errorf("verified %d + %d times, want once", st[0].Verified, st[1].Verified)
	}
	if n := a.byID.Load() - before; n != 0 {
		t.Errorf("%d store lookups for a copy the syncer had just stored", n)
	}
}
