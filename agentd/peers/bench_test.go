package peers_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/peers"
	"github.com/agentnode/agentnode/internal/testkit"
)

// BenchmarkLessonPropagation measures the time from Publish on node B to
// the lesson being stored on node A by A's Syncer (live subscription,
// signature check, local Publish with its fsync), one lesson at a time.
//
//	go test -tags libsecp256k1 -run '^$' -bench LessonPropagation -benchtime 200x ./agentd/peers/
func BenchmarkLessonPropagation(b *testing.B) {
	a, peer := openNode(b, b.TempDir(), nil), openNode(b, b.TempDir(), nil)
	a.stored = make(chan *nostr.Event, 64)
	author, agent := testkit.NewKey(b), testkit.NewKey(b)
	def := definition(b, author, "bench")
	s := peers.New(peers.Config{Peers: []string{peer.URL}, Local: a, Backoff: fast, Logger: quiet(),
		Interests: filters(lessonsOf(def.ID))})
	run(b, s)
	warm := lesson(b, agent, def.ID, "warm-up", nostr.Now())
	peer.publish(b, warm)
	waitStored(b, a.stored, warm.ID)

	lat := make([]time.Duration, 0, b.N)
	i := 0
	for b.Loop() {
		b.StopTimer()
		l := lesson(b, agent, def.ID, fmt.Sprintf("lesson %d", i), nostr.Now())
		i++
		b.StartTimer()
		start := time.Now()
		peer.publish(b, l)
		waitStored(b, a.stored, l.ID)
		lat = append(lat, time.Since(start))
	}
	reportLatency(b, lat)
}

// BenchmarkCatchUp measures a fresh node fetching a peer's history of
// 1,000 lessons (catch-up plus backfill pages of 500).
//
//	go test -tags libsecp256k1 -run '^$' -bench CatchUp -benchtime 3x ./agentd/peers/
func BenchmarkCatchUp(b *testing.B) {
	const n = 1000
	peer := openNode(b, b.TempDir(), nil)
	author, agent := testkit.NewKey(b), testkit.NewKey(b)
	def := definition(b, author, "bench")
	for i := range n {
		peer.publish(b, lesson(b, agent, def.ID, fmt.Sprintf("lesson %d", i), nostr.Now()-nostr.Timestamp(n-i)))
	}
	var total time.Duration
	for b.Loop() {
		b.StopTimer()
		a := openNode(b, b.TempDir(), nil)
		s := peers.New(peers.Config{Peers: []string{peer.URL}, Local: a, Backoff: fast, Logger: quiet(),
			Interests: filters(lessonsOf(def.ID))})
		b.StartTimer()
		start := time.Now()
		stop := runFor(b, s)
		testkit.WaitFor(b, time.Minute, "the whole history", func() bool { return s.Status()[0].Stored >= n })
		total += time.Since(start)
		b.StopTimer()
		stop()
		a.stop()
		b.StartTimer()
	}
	b.ReportMetric(float64(n*b.N)/total.Seconds(), "events/s")
}

func waitStored(tb testing.TB, stored <-chan *nostr.Event, id string) {
	tb.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case evt := <-stored:
			if evt.ID == id {
				return
			}
		case <-deadline:
			tb.Fatalf("event %s not stored within 5 s", id)
		}
	}
}

func reportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.90), "p90-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
}
