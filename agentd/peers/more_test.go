package peers_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/peers"
	"github.com/agentnode/agentnode/internal/testkit"
)

// An agent added to the outbox (Refresh) has its earlier events pushed:
// each outbox filter has its own push watermark, so a new one starts from
// its beginning.
func TestSyncer_RefreshOutboxPushesANewAgentsHistory(t *testing.T) {
	a, b := openNode(t, t.TempDir(), nil), openNode(t, t.TempDir(), nil)
	author, first, second := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	def := definition(t, author, "def")
	early := lesson(t, second, def.ID, "before it was ours", nostr.Now()-3600)
	mine := lesson(t, first, def.ID, "ours from the start", nostr.Now()-60)
	a.publish(t, early, mine)

	var mu sync.Mutex
	authors := []string{first.PK}
	s := peers.New(peers.Config{
		Peers: []string{b.URL}, Local: a, Backoff: fast, Logger: testLogger(t),
		Outbox: func() []nostr.Filter {
			mu.Lock()
			defer mu.Unlock()
			return []nostr.Filter{{Authors: authors}}
		},
	})
	a.syncer.Store(s)
	run(t, s)
	testkit.WaitFor(t, testWait, "the first agent's lesson is pushed", func() bool { return b.has(t, mine.ID) })
	if b.has(t, early.ID) {
		t.Fatal("an event outside the outbox was pushed")
	}

	mu.Lock()
	authors = []string{first.PK, second.PK}
	mu.Unlock()
	s.Refresh()
	testkit.WaitFor(t, testWait, "the new agent's old lesson is pushed", func() bool { return b.has(t, early.ID) })
}

// A push the peer refuses for good is counted and skipped; the events
// after it still go.
func TestSyncer_PushRefusalIsCountedAndSkipped(t *testing.T) {
	a, b := openNode(t, t.TempDir(), nil), openNode(t, t.TempDir(), nil)
	author, agent := testkit.NewKey(t), testkit.NewKey(t)
	def := definition(t, author, "def")
	retracted := lesson(t, agent, def.ID, "retracted on the peer", nostr.Now()-20)
	deletion := sign(t, agent, &nostr.Event{Kind: 5, CreatedAt: nostr.Now() - 10, Tags: nostr.Tags{{"e", retracted.ID}}})
	b.publish(t, deletion) // the peer will refuse the deleted lesson: "blocked: ..."
	later := lesson(t, agent, def.ID, "after it", nostr.Now())
	a.publish(t, retracted, later)

	s := peers.New(peers.Config{
		Peers: []string{b.URL}, Local: a, Backoff: fast, Logger: testLogger(t),
		Outbox: filters(nostr.Filter{Kinds: []int{4129}, Authors: []string{agent.PK}}),
	})
	run(t, s)
	testkit.WaitFor(t, testWait, "the later lesson is pushed", func() bool { return b.has(t, later.ID) })
	testkit.WaitFor(t, testWait, "one push refused, one accepted", func() bool {
		st := s.Status()[0]
		return st.PushRefused == 1 && st.Pushed == 1
	})
	if b.has(t, retracted.ID) {
		t.Error("the peer stored a deleted event")
	}
}

// Notify never blocks: with a queue of one, a burst overflows it and the
// pusher catches up from its watermarks instead; every event arrives.
func TestSyncer_QueueOverflowCatchesUp(t *testing.T) {
	a, b := openNode(t, t.TempDir(), nil), openNode(t, t.TempDir(), nil)
	author, agent := testkit.NewKey(t), testkit.NewKey(t)
	def := definition(t, author, "def")
	s := peers.New(peers.Config{
		Peers: []string{b.URL}, Local: a, Backoff: fast, Logger: testLogger(t), QueueSize: 1,
		Outbox: filters(nostr.Filter{Authors: []string{agent.PK}}),
	})
	a.syncer.Store(s)
	run(t, s)
	testkit.WaitFor(t, testWait, "connected", func() bool { return s.Status()[0].Connected })

	var burst []*nostr.Event
	for i := range 50 {
		burst = append(burst, lesson(t, agent, def.ID, fmt.Sprintf("burst %d", i), nostr.Now()))
	}
	a.publish(t, burst...)
	testkit.WaitFor(t, 10*time.Second, "all 50 lessons pushed", func() bool {
		for _, evt := range burst {
			if !b.has(t, evt.ID) {
				return false
			}
		}
		return true
	})
}

// An event the local store refuses (here: a well-signed lesson with
// neither title nor content, which the relay's validators reject) is
// counted and skipped; the rest of the catch-up is stored.
func TestSyncer_LocalRefusalIsSkipped(t *testing.T) {
	a := openNode(t, t.TempDir(), nil)
	author, agent := testkit.NewKey(t), testkit.NewKey(t)
	def := definition(t, author, "def")
	malformed := sign(t, agent, &nostr.Event{Kind: 4129, CreatedAt: nostr.Now() - 5, Content: "",
		Tags: nostr.Tags{{"e", def.ID}}})
	good := lesson(t, agent, def.ID, "well formed", nostr.Now()-6)
	fake := openFakePeer(t, malformed, good)

	s := peers.New(peers.Config{
		Peers: []string{fake.URL}, Local: a, Backoff: fast, Logger: testLogger(t),
		Interests: filters(lessonsOf(def.ID)),
	})
	run(t, s)
	testkit.WaitFor(t, testWait, "the good lesson stored, the malformed one refused", func() bool {
		return a.has(t, good.ID) && s.Status()[0].Refused == 1
	})
	if a.has(t, malformed.ID) {
		t.Error("the malformed lesson was stored")
	}
	if st := s.Status()[0]; st.LastError != "" || !st.Connected {
		t.Errorf("a refusal ended the session: %+v", st)
	}
}
