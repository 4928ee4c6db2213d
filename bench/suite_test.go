package bench

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestRunIngest_Smoke runs every scenario with tiny numbers and checks
// that every event was acknowledged and every figure measured.
func TestRunIngest_Smoke(t *testing.T) {
	if testing.Short() {
		t.Skip("opens six relays and fsyncs on disk")
	}
	rep, err := RunIngest(t.Context(), IngestOptions{Events: 40, Conns: 3, Window: 5, Dir: t.TempDir(), Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Scenarios) != 3 || rep.SigCPU <= 0 {
		t.Fatalf("%d scenarios, sig CPU %v", len(rep.Scenarios), rep.SigCPU)
	}
	for _, sc := range rep.Scenarios {
		if len(sc.Runs) != 2 || sc.Runs[0].Relay != NameAgentnode || sc.Runs[1].Relay != NameKhatru {
			t.Fatalf("%s: runs %+v", sc.Name, sc.Runs)
		}
		for _, r := range sc.Runs {
			if r.Sent != 40 || r.OK != 40 || r.EventsPerSecond <= 0 || r.P99Ms < r.P50Ms || r.P50Ms <= 0 || r.CPUPer1000 <= 0 || r.PeakRSSMiB <= 0 {
				t.Errorf("%s, %s: %+v", sc.Name, r.Relay, r)
			}
		}
	}
	var b strings.Builder
	if err := rep.WriteTable(&b); err != nil || !strings.Contains(b.String(), "3 publishers, 5 in flight each:") {
		t.Errorf("table (%v):\n%s", err, b.String())
	}
}

// TestRunFanout_Smoke checks that every event reached every subscription
// on both relays.
func TestRunFanout_Smoke(t *testing.T) {
	if testing.Short() {
		t.Skip("opens two relays")
	}
	rep, err := RunFanout(t.Context(), FanoutOptions{Subs: 30, Conns: 4, Events: 4, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Relays) != 2 {
		t.Fatalf("relays %+v", rep.Relays)
	}
	for _, f := range rep.Relays {
		if f.Events != 4 || f.P50Ms <= 0 || f.MaxMs < f.P99Ms {
			t.Errorf("%s: %+v", f.Relay, f)
		}
	}
}

// BenchmarkIngestManyPublishers sends b.N pre-signed lessons to
// agentnode over 8 websockets with 32 in flight on each; one op is one
// durable, acknowledged event.
func BenchmarkIngestManyPublishers(b *testing.B) {
	ctx := b.Context()
	evts, err := genIngestLessons(ctx, rand.New(rand.NewPCG(1, 2)), 1, b.N)
	if err != nil {
		b.Fatal(err)
	}
	s, err := serve(ctx, openers[0], b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer closeServer(s, &err)
	b.ResetTimer()
	_, errs, elapsed, err := publishMany(ctx, s.URL, evts, 8, 32)
	b.StopTimer()
	for _, e := range errs {
		if e != nil {
			b.Fatal(e)
		}
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
}
