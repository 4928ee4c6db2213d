package peers_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/peers"
	"github.com/agentnode/agentnode/internal/testkit"
)

// A first catch-up with a peer that speaks NIP-77 fetches only what the
// local store lacks: A already holds 30 of B's 40 lessons (copied by hand),
// so 10 cross, not 40 as a REQ catch-up would send.
func TestSyncer_CatchUpByNegentropyFetchesOnlyWhatIsMissing(t *testing.T) {
	a, b := openNode(t, t.TempDir(), nil), openNode(t, t.TempDir(), nil)
	author, agent := testkit.NewKey(t), testkit.NewKey(t)
	def := definition(t, author, "def")
	var all []*nostr.Event
	for i := range 40 {
		all = append(all, lesson(t, agent, def.ID, fmt.Sprintf("lesson %d", i), nostr.Now()-nostr.Timestamp(3600+i)))
	}
	b.publish(t, all...)
	a.publish(t, all[:30]...)
	marks := peers.NewMemWatermarks()
	s := peers.New(peers.Config{Peers: []string{b.URL}, Local: a, Backoff: fast, Logger: testLogger(t),
		Interests: filters(lessonsOf(def.ID)), Watermarks: marks})
	run(t, s)
	testkit.WaitFor(t, 10*time.Second, "A holds all 40 lessons", func() bool {
		for _, evt := range all[30:] {
			if !a.has(t, evt.ID) {
				return false
			}
		}
		return true
	})
	testkit.WaitFor(t, 10*time.Second, "the catch-up completes", func() bool { return pullMark(t, marks, b.URL) == all[30].CreatedAt })
	if got := s.Status()[0].Received; got != 10 {
		t.Errorf("received %d events, want the 10 A lacked", got)
	}
}

// An event with an old created_at that reached the peer while A was away
// is below A's watermark: a REQ catch-up (since the watermark) misses it,
// the NIP-77 one finds it.
func TestSyncer_CatchUpByNegentropyFindsOldEventsThatArrivedLate(t *testing.T) {
	a, b := openNode(t, t.TempDir(), nil), openNode(t, t.TempDir(), nil)
	author, agent := testkit.NewKey(t), testkit.NewKey(t)
	def := definition(t, author, "def")
	recent := lesson(t, agent, def.ID, "recent", nostr.Now()-10)
	b.publish(t, recent)
	marks := peers.NewMemWatermarks()
	cfg := peers.Config{Peers: []string{b.URL}, Local: a, Backoff: fast, Logger: testLogger(t),
		Interests: filters(lessonsOf(def.ID)), Watermarks: marks}
	stop := runFor(t, peers.New(cfg))
	testkit.WaitFor(t, 10*time.Second, "the first catch-up", func() bool { return pullMark(t, marks, b.URL) == recent.CreatedAt })
	stop()
	old := lesson(t, agent, def.ID, "written a day ago, relayed to B just now", nostr.Now()-86400)
	b.publish(t, old)
	run(t, peers.New(cfg))
	testkit.WaitFor(t, 10*time.Second, "A finds the late old lesson", func() bool { return a.has(t, old.ID) })
}
