package peers_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/peers"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/relay"
)

// Node B serves a definition and its lessons; a Syncer on node A follows
// B. A lesson published on B reaches A's store within 2 s (the issue's
// acceptance bound); the latency is logged.
func TestSyncer_LessonReachesPeerWithin2s(t *testing.T) {
	a, b := openNode(t, t.TempDir(), nil), openNode(t, t.TempDir(), nil)
	author, sibling := testkit.NewKey(t), testkit.NewKey(t)
	def := definition(t, author, "reviewer")
	old := lesson(t, sibling, def.ID, "published before A followed B", nostr.Now()-60)
	b.publish(t, def, old)

	s := peers.New(peers.Config{
		Peers: []string{b.URL}, Local: a, Backoff: fast, Logger: testLogger(t),
		Interests: filters(lessonsOf(def.ID), nostr.Filter{IDs: []string{def.ID}}),
	})
	a.syncer.Store(s)
	run(t, s)
	testkit.WaitFor(t, testWait, "catch-up brings the definition and the old lesson to A", func() bool {
		return a.has(t, def.ID) && a.has(t, old.ID)
	})

	live := lesson(t, sibling, def.ID, "published while A follows B", nostr.Now())
	start := time.Now()
	b.publish(t, live)
	testkit.WaitFor(t, testWait, "the live lesson reaches A", func() bool { return a.has(t, live.ID) })
	t.Logf("lesson propagation B -> A: %v", time.Since(start))

	// The counters move once the local Publish has returned. An event may
	// come twice (the catch-up subscription also listens until it is
	// closed); a duplicate counts as stored.
	testkit.WaitFor(t, testWait, "every event received counted as stored", func() bool {
		st := s.Status()[0]
		return st.Stored >= 3 && st.Stored == st.Received
	})
	st := s.Status()[0]
	if !st.Connected || st.Refused != 0 || st.LastError != "" {
		t.Errorf("status = %+v, want connected, none refused, no error", st)
	}
	if st.LastSeen.IsZero() || time.Since(st.LastSeen) > time.Minute {
		t.Errorf("LastSeen = %v", st.LastSeen)
	}
}

// A peer that serves forged events (a tampered signature; a valid
// signature under another event's id) gets none of them stored, in the
// catch-up or live; its genuine events are stored.
func TestSyncer_NeverStoresForgedEvents(t *testing.T) {
	a := openNode(t, t.TempDir(), nil)
	author, agent, forger := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	def := definition(t, author, "def")
	good := lesson(t, agent, def.ID, "genuine", nostr.Now()-10)
	badSig := tamper(lesson(t, agent, def.ID, "signed", nostr.Now()-9), "rewritten after signing")
	victim := lesson(t, agent, def.ID, "the real one", nostr.Now()-8)
	stolenID := lesson(t, forger, def.ID, "squatting on the victim's id", nostr.Now()-7)
	stolenID.ID = victim.ID
	fake := openFakePeer(t, good, badSig, stolenID)

	s := peers.New(peers.Config{
		Peers: []string{fake.URL}, Local: a, Backoff: fast, Logger: testLogger(t),
		Interests: filters(lessonsOf(def.ID)),
	})
	run(t, s)
	// Refused counts every refusal: a reconnect (a slow machine, a missed
	// ping) replays the catch-up and counts the same forgeries again, so
	// the counts are lower bounds; what must never happen is checked below.
	testkit.WaitFor(t, 20*time.Second, "the genuine lesson is stored and both forgeries refused", func() bool {
		return a.has(t, good.ID) && s.Status()[0].Refused >= 2
	})
	refused := s.Status()[0].Refused

	liveGood := lesson(t, agent, def.ID, "genuine, live", nostr.Now())
	liveBad := tamper(lesson(t, agent, def.ID, "live", nostr.Now()), "tampered, live")
	fake.broadcast(liveBad, liveGood)
	testkit.WaitFor(t, 20*time.Second, "the live genuine lesson is stored and the live forgery refused", func() bool {
		return a.has(t, liveGood.ID) && s.Status()[0].Refused > refused
	})

	for _, evt := range []*nostr.Event{badSig, liveBad} {
		if a.has(t, evt.ID) {
			t.Errorf("event with a bad signature %s was stored", evt.ID)
		}
	}
	if a.has(t, victim.ID) {
		t.Fatal("the forged event was stored under the victim's id")
	}
	// The id was not poisoned: the real event is still accepted.
	a.publish(t, victim)
	if got, _ := a.QuerySync(context.Background(), nostr.Filter{IDs: []string{victim.ID}}); len(got) != 1 || got[0].Content != victim.Content {
		t.Errorf("the victim's id holds %v", got)
	}
}

// tamper changes evt's content after signing and recomputes the id, so
// that only the signature is wrong.
func tamper(evt *nostr.Event, content string) *nostr.Event {
	evt.Content = content
	evt.ID = evt.GetID()
	return evt
}

// The peer restarts (same data, same address). Events published on it
// while it was down reach A, which resumes from its watermark: the old
// history is not fetched again.
func TestSyncer_ResumesAfterPeerRestart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr, bDir := ln.Addr().String(), t.TempDir()
	a, b := openNode(t, t.TempDir(), nil), openNode(t, bDir, ln)
	author, agent := testkit.NewKey(t), testkit.NewKey(t)
	def := definition(t, author, "def")
	oldest := lesson(t, agent, def.ID, "two hours ago", nostr.Now()-7200)
	older := lesson(t, agent, def.ID, "one hour ago", nostr.Now()-3600)
	b.publish(t, oldest, older)

	marks := peers.NewMemWatermarks()
	s := peers.New(peers.Config{
		Peers: []string{b.URL}, Local: a, Backoff: fast, Logger: testLogger(t),
		Interests: filters(lessonsOf(def.ID)), Watermarks: marks,
	})
	run(t, s)
	testkit.WaitFor(t, testWait, "A has B's history", func() bool { return a.has(t, oldest.ID) && a.has(t, older.ID) })
	testkit.WaitFor(t, testWait, "the watermark is the newest lesson", func() bool {
		return pullMark(t, marks, b.URL) == older.CreatedAt
	})

	b.stop()
	testkit.WaitFor(t, testWait, "A sees B go", func() bool { return !s.Status()[0].Connected })
	r, err := relay.Open(context.Background(), relay.Config{DataDir: bDir, Version: "test", Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	whileDown := []*nostr.Event{
		lesson(t, agent, def.ID, "while A could not see B (1)", nostr.Now()),
		lesson(t, agent, def.ID, "while A could not see B (2)", nostr.Now()),
	}
	for _, evt := range whileDown {
		if err := r.Publish(context.Background(), evt); err != nil {
			t.Fatal(err)
		}
	}
	before := s.Status()[0].Received
	ln2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	b2 := serve(t, r, ln2)
	t.Cleanup(b2.stop)

	testkit.WaitFor(t, testWait, "events published while B was down reach A", func() bool {
		return a.has(t, whileDown[0].ID) && a.has(t, whileDown[1].ID)
	})
	newest := max(whileDown[0].CreatedAt, whileDown[1].CreatedAt)
	testkit.WaitFor(t, testWait, "the catch-up completes: the watermark moves to the new events", func() bool {
		return pullMark(t, marks, b.URL) == newest
	})
	// Resumed from the watermark (older's created_at) minus the 10 s
	// overlap, reconciled by NIP-77: only the two new ones cross (a REQ
	// catch-up would send older again).
	if got := s.Status()[0].Received - before; got != 2 {
		t.Errorf("received %d events after the restart, want 2", got)
	}
}

// pullMark is the single pull watermark kept for peer.
func pullMark(tb testing.TB, w peers.Watermarks, peer string) nostr.Timestamp {
	tb.Helper()
	m, err := w.Load(context.Background(), nostr.NormalizeURL(peer))
	if err != nil {
		tb.Fatal(err)
	}
	for _, ts := range m.Pull {
		return ts
	}
	return 0
}

// The node's own agents' events are pushed to the peer: those stored
// before the syncer started (catch-up) and those stored after (Notify).
// Nobody else's are.
func TestSyncer_PushesOutbox(t *testing.T) {
	a, b := openNode(t, t.TempDir(), nil), openNode(t, t.TempDir(), nil)
	author, agent, stranger := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	def := definition(t, author, "def")
	before := lesson(t, agent, def.ID, "learnt before the syncer started", nostr.Now()-30)
	a.publish(t, def, before)

	s := peers.New(peers.Config{
		Peers: []string{b.URL}, Local: a, Backoff: fast, Logger: testLogger(t),
		Outbox: filters(nostr.Filter{Authors: []string{agent.PK}}),
	})
	a.syncer.Store(s)
	run(t, s)
	testkit.WaitFor(t, testWait, "the catch-up pushes the earlier lesson", func() bool { return b.has(t, before.ID) })

	foreign := lesson(t, stranger, def.ID, "not ours to push", nostr.Now())
	after := lesson(t, agent, def.ID, "learnt while the syncer runs", nostr.Now())
	a.publish(t, foreign, after)
	testkit.WaitFor(t, testWait, "the new lesson is pushed", func() bool { return b.has(t, after.ID) })

	if b.has(t, foreign.ID) || b.has(t, def.ID) {
		t.Error("an event outside the outbox was pushed")
	}
	// The peer stores before it answers OK: wait for the acknowledgement.
	testkit.WaitFor(t, testWait, "both pushes acknowledged", func() bool { return s.Status()[0].Pushed == 2 })
	if st := s.Status()[0]; st.PushRefused != 0 {
		t.Errorf("status = %+v, want none refused", st)
	}
}

// Changing the interests and calling Refresh resubscribes: the new
// filter's whole history arrives, and its live events too.
func TestSyncer_RefreshResubscribes(t *testing.T) {
	a, b := openNode(t, t.TempDir(), nil), openNode(t, t.TempDir(), nil)
	author, agent := testkit.NewKey(t), testkit.NewKey(t)
	def1, def2 := definition(t, author, "one"), definition(t, author, "two")
	l1 := lesson(t, agent, def1.ID, "for one", nostr.Now()-3600)
	l2 := lesson(t, agent, def2.ID, "for two", nostr.Now()-3600)
	b.publish(t, l1, l2)

	var mu sync.Mutex
	interests := []nostr.Filter{lessonsOf(def1.ID)}
	s := peers.New(peers.Config{
		Peers: []string{b.URL}, Local: a, Backoff: fast, Logger: testLogger(t),
		Interests: func() []nostr.Filter {
			mu.Lock()
			defer mu.Unlock()
			return interests
		},
	})
	run(t, s)
	testkit.WaitFor(t, testWait, "the first definition's lesson", func() bool { return a.has(t, l1.ID) })
	if a.has(t, l2.ID) {
		t.Fatal("a lesson outside the interests arrived")
	}

	mu.Lock()
	interests = []nostr.Filter{lessonsOf(def1.ID), lessonsOf(def2.ID)}
	mu.Unlock()
	s.Refresh()
	testkit.WaitFor(t, testWait, "the second definition's old lesson, after Refresh", func() bool { return a.has(t, l2.ID) })

	l3 := lesson(t, agent, def2.ID, "for two, live", nostr.Now())
	b.publish(t, l3)
	testkit.WaitFor(t, testWait, "the second definition's live lesson", func() bool { return a.has(t, l3.ID) })
}

// A history longer than a page is fetched page by page, including a
// second that holds more events than a page.
func TestSyncer_PagesThroughLongHistory(t *testing.T) {
	a, b := openNode(t, t.TempDir(), nil), openNode(t, t.TempDir(), nil)
	author, agent := testkit.NewKey(t), testkit.NewKey(t)
	def := definition(t, author, "def")
	var all []*nostr.Event
	for i := range 15 {
		all = append(all, lesson(t, agent, def.ID, fmt.Sprintf("spread %d", i), nostr.Now()-1000+nostr.Timestamp(i)))
	}
	for i := range 8 {
		all = append(all, lesson(t, agent, def.ID, fmt.Sprintf("same second %d", i), nostr.Now()-2000))
	}
	b.publish(t, all...)

	s := peers.New(peers.Config{
		Peers: []string{b.URL}, Local: a, Backoff: fast, Logger: testLogger(t),
		Interests: filters(lessonsOf(def.ID)), PageSize: 5,
	})
	run(t, s)
	testkit.WaitFor(t, testWait, "all 23 lessons, 5 per page", func() bool {
		got, err := a.QuerySync(context.Background(), lessonsOf(def.ID))
		return err == nil && len(got) == len(all)
	})
}

// The watermarks survive a restart of the node (FileWatermarks): a new
// Syncer resumes where the old one stopped.
func TestSyncer_ResumesFromSavedWatermarks(t *testing.T) {
	aDir := t.TempDir()
	a, b := openNode(t, aDir, nil), openNode(t, t.TempDir(), nil)
	author, agent := testkit.NewKey(t), testkit.NewKey(t)
	def := definition(t, author, "def")
	b.publish(t, lesson(t, agent, def.ID, "two hours ago", nostr.Now()-7200))
	older := lesson(t, agent, def.ID, "one hour ago", nostr.Now()-3600)
	b.publish(t, older)

	start := func() *peers.Syncer {
		marks, err := peers.OpenFileWatermarks(aDir)
		if err != nil {
			t.Fatal(err)
		}
		return peers.New(peers.Config{
			Peers: []string{b.URL}, Local: a, Backoff: fast, Logger: testLogger(t),
			Interests: filters(lessonsOf(def.ID)), Watermarks: marks,
		})
	}
	first := start()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- first.Run(ctx) }()
	testkit.WaitFor(t, testWait, "the first run fetches the history", func() bool { return a.has(t, older.ID) && first.Status()[0].Received == 2 })
	marks, _ := peers.OpenFileWatermarks(aDir)
	testkit.WaitFor(t, testWait, "the watermark is on disk", func() bool {
		marks, _ = peers.OpenFileWatermarks(aDir)
		return pullMark(t, marks, b.URL) == older.CreatedAt
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	newer := lesson(t, agent, def.ID, "now", nostr.Now())
	b.publish(t, newer)
	second := start()
	run(t, second)
	testkit.WaitFor(t, testWait, "the second run fetches the new lesson", func() bool { return a.has(t, newer.ID) })
	testkit.WaitFor(t, testWait, "the catch-up completes", func() bool {
		m, _ := peers.OpenFileWatermarks(aDir)
		return pullMark(t, m, b.URL) == newer.CreatedAt
	})
	if got := second.Status()[0].Received; got != 1 { // newer: older is within the overlap, but A has it (NIP-77)
		t.Errorf("second run received %d events, want 1", got)
	}
}

// An event dated in the future is stored, but the watermark stays at the
// local clock: it cannot make the syncer skip what happens meanwhile.
func TestSyncer_FutureEventDoesNotMoveWatermarkPastNow(t *testing.T) {
	a, b := openNode(t, t.TempDir(), nil), openNode(t, t.TempDir(), nil)
	author, agent := testkit.NewKey(t), testkit.NewKey(t)
	def := definition(t, author, "def")
	future := lesson(t, agent, def.ID, "ten minutes ahead", nostr.Now()+600)
	b.publish(t, future)

	marks := peers.NewMemWatermarks()
	s := peers.New(peers.Config{
		Peers: []string{b.URL}, Local: a, Backoff: fast, Logger: testLogger(t),
		Interests: filters(lessonsOf(def.ID)), Watermarks: marks,
	})
	run(t, s)
	testkit.WaitFor(t, testWait, "the future lesson is stored", func() bool { return a.has(t, future.ID) })
	testkit.WaitFor(t, testWait, "a watermark is set", func() bool { return pullMark(t, marks, b.URL) != 0 })
	if got, now := pullMark(t, marks, b.URL), nostr.Now(); got > now {
		t.Errorf("watermark %d is past now %d", got, now)
	}
}

// A peer nobody answers at: the status says why, and Run still stops at once.
func TestSyncer_UnreachablePeer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "ws://" + ln.Addr().String()
	ln.Close()
	a := openNode(t, t.TempDir(), nil)
	s := peers.New(peers.Config{Peers: []string{url}, Local: a, Backoff: fast, Logger: testLogger(t),
		Interests: filters(lessonsOf(testkit.NewKey(t).PK))})
	run(t, s)
	testkit.WaitFor(t, testWait, "the failure is reported", func() bool { return s.Status()[0].LastError != "" })
	if st := s.Status()[0]; st.Connected || st.URL != url {
		t.Errorf("status = %+v", st)
	}
}

func TestSyncer_RunRefusesBadConfig(t *testing.T) {
	a := openNode(t, t.TempDir(), nil)
	for _, tc := range []struct {
		name string
		cfg  peers.Config
		want error
	}{
		{"no local store", peers.Config{Peers: []string{"ws://127.0.0.1:1"}}, peers.ErrNoLocal},
		{"http url", peers.Config{Peers: []string{"http://127.0.0.1:1"}, Local: a}, peers.ErrBadPeerURL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := peers.New(tc.cfg).Run(context.Background())
			if !errors.Is(err, tc.want) {
				t.Errorf("Run = %v, want %v", err, tc.want)
			}
		})
	}
}
