package directory_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/internal/testkit/testrelay"
	"github.com/nbd-wtf/go-nostr"
)

// benchCaps is the capability vocabulary of the synthetic population.
var benchCaps = []string{"code.review", "web.search", "data-analysis", "visualization", "translation",
	"summarize", "sql", "image.gen", "speech", "planning", "math", "legal", "medical", "finance",
	"travel", "calendar", "email", "shell", "git", "docs"}

// fakeKey returns a deterministic 64-hex "pubkey" (the directory never
// checks that it is on the curve: the relay verified the signature).
func fakeKey(rng *rand.Rand) string {
	return fmt.Sprintf("%016x%016x%016x%016x", rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64())
}

// fillDirectory ingests n agents — heartbeat with an agent object (3 of the
// 20 capabilities, a cost) and 3 reviews each — straight into d.
func fillDirectory(d *directory.Directory, n int, now time.Time) {
	rng := rand.New(rand.NewPCG(7, 7))
	reviewers := make([]string, 50)
	for i := range reviewers {
		reviewers[i] = fakeKey(rng)
	}
	for i := range n {
		pk := fakeKey(rng)
		caps := []string{benchCaps[rng.IntN(20)], benchCaps[rng.IntN(20)], benchCaps[rng.IntN(20)]}
		hb := &events.Heartbeat{Agent: pk, Status: events.StatusActive, Capacity: 4, Load: rng.IntN(5),
			Capabilities: caps, Card: &events.AgentCard{Name: fmt.Sprintf("agent %d", i),
				CostMetrics: &events.CostMetrics{CostPerToken: float64(rng.IntN(100)) / 100000}}}
		evt := hb.Template()
		evt.PubKey, evt.CreatedAt, evt.ID = pk, nostr.Timestamp(now.Unix()), fakeKey(rng)
		d.Ingest(&evt)
		for range 3 {
			ev := (&events.Evaluation{Agent: pk, Score: float64(rng.IntN(101)) / 10}).Template()
			ev.PubKey, ev.CreatedAt, ev.ID = reviewers[rng.IntN(len(reviewers))], nostr.Timestamp(now.Unix()), fakeKey(rng)
			d.Ingest(&ev)
		}
	}
}

// BenchmarkSearch10k: agentSearch over 10,000 agents (40,000 events), top
// 20, one sub-benchmark per query shape. Reports p50 and p99 latency.
func BenchmarkSearch10k(b *testing.B) {
	now := time.Now()
	d := directory.New(directory.Config{Now: func() time.Time { return now }, Logger: quiet})
	fillDirectory(d, 10_000, now)
	if n := d.Stats().Agents; n != 10_000 {
		b.Fatalf("%d agents", n)
	}
	for _, bq := range []struct {
		name string
		q    directory.Query
	}{
		{"capability+minScore+maxCost", directory.Query{Capabilities: []string{"code.review"}, MinScore: 5, MaxCost: ptr(0.0005), Limit: 20}},
		{"two-capabilities", directory.Query{Capabilities: []string{"sql", "git"}, Limit: 20}},
		{"minScore-only", directory.Query{MinScore: 8, Limit: 20}},
		{"text", directory.Query{Text: "agent 99", Limit: 20}},
	} {
		b.Run(bq.name, func(b *testing.B) { benchSearch(b, d, bq.q) })
	}
}

// benchSearch runs q b.N times and reports latency percentiles.
func benchSearch(b *testing.B, d *directory.Directory, q directory.Query) {
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		hits := d.Search(q)
		lat = append(lat, time.Since(start))
		if len(hits) == 0 {
			b.Fatal("no hits")
		}
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkHeartbeatIngest: signed heartbeats published through a real
// relay (LMDB in a temp dir) until the directory has applied every one;
// reports heartbeats per second end to end.
func BenchmarkHeartbeatIngest(b *testing.B) {
	rel, clk := testrelay.Open(b), newClock()
	d := startDir(b, rel, clk, directory.Config{})
	agents := make([]key, 100)
	for i := range agents {
		agents[i] = testkit.NewKey(b)
	}
	evts := make([]*nostr.Event, b.N)
	for i := range evts {
		// One agent's heartbeats are a second apart, so each replaces the last.
		at := clk.Now().Add(time.Duration(i/len(agents)) * time.Second)
		evt, err := directory.BuildHeartbeat(agents[i%len(agents)].SK, directory.Status{Capacity: 4, Load: i % 4,
			Capabilities: []string{"code.review"}}, at, 10*time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		evts[i] = evt
	}
	base := d.Stats().Ingested
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	for _, evt := range evts {
		if err := rel.Publish(ctx, evt); err != nil {
			b.Fatal(err)
		}
	}
	testkit.WaitFor(b, within, "every heartbeat applied", func() bool { return d.Stats().Ingested >= base+uint64(b.N) })
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "heartbeats/s")
}

// BenchmarkHeartbeatApply: the directory's share alone — parse, validate
// and apply one heartbeat (no relay, no signature check).
func BenchmarkHeartbeatApply(b *testing.B) {
	now := time.Now()
	d := directory.New(directory.Config{Now: func() time.Time { return now }, Logger: quiet})
	rng := rand.New(rand.NewPCG(3, 3))
	agents := make([]string, 1000)
	for i := range agents {
		agents[i] = fakeKey(rng)
	}
	evts := make([]*nostr.Event, 10_000)
	for i := range evts {
		pk := agents[i%len(agents)]
		hb := &events.Heartbeat{Agent: pk, Status: events.StatusActive, Capacity: 4, Load: i % 4,
			Capabilities: []string{"code.review", "web.search"}, Card: &events.AgentCard{Name: "x"}}
		evt := hb.Template()
		evt.PubKey, evt.CreatedAt, evt.ID = pk, nostr.Timestamp(now.Unix()+int64(i)), fakeKey(rng)
		evts[i] = &evt
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d.Ingest(evts[i%len(evts)])
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "heartbeats/s")
}
