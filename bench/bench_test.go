package bench

import (
	"context"
	"encoding/json"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/relay"
)

// TestRunRelay_Smoke runs every phase with tiny numbers and checks that
// every figure was measured. It asserts no speed: figures are for reading.
func TestRunRelay_Smoke(t *testing.T) {
	if testing.Short() {
		t.Skip("opens four relays and fsyncs on disk")
	}
	opts := RelayOptions{Events: 30, Stored: 300, Defs: 10, Queries: 10, Subs: 20, Conns: 4, Dir: t.TempDir(), Seed: 1}
	rep, err := RunRelay(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(rep.Relays), 2; got != want {
		t.Fatalf("relays: got %d, want %d", got, want)
	}
	for _, f := range rep.Relays {
		checkIngest(t, f.Name+" window", f.Ingest, opts.Events)
		checkIngest(t, f.Name+" window 1", f.IngestSerial, opts.Events)
		checkLoad(t, f.Name, f.Load, opts.Stored)
		checkQueries(t, f.Name+" lessons-of-def", f.LessonsOfDef, opts.Queries)
		checkMemory(t, f.Name, f.Memory, opts.Subs)
	}
	if s := rep.relay(NameAgentnode).SearchDefs; s == nil {
		t.Error("agentnode: no search figures")
	} else {
		checkQueries(t, "agentnode search", *s, opts.Queries)
	}
	if rep.relay(NameKhatru).SearchDefs != nil {
		t.Error("khatru+lmdb: search figures, but it has no search")
	}
	checkNote(t, rep, "10 of 10 queries returned the same events")
	checkTable(t, rep)
}

func checkIngest(t *testing.T, name string, f IngestFigures, sent int) {
	t.Helper()
	if f.Sent != sent || f.OK != sent {
		t.Errorf("%s: sent %d, OK %d, want %d OK (first error %q)", name, f.Sent, f.OK, sent, f.FirstError)
	}
	if f.EventsPerSecond <= 0 || f.P50Ms <= 0 || f.P99Ms < f.P50Ms {
		t.Errorf("%s: ev/s %v, p50 %v, p99 %v: want positive, p99 >= p50", name, f.EventsPerSecond, f.P50Ms, f.P99Ms)
	}
}

func checkLoad(t *testing.T, name string, f LoadFigures, stored int) {
	t.Helper()
	if f.Events != stored || f.Refused != 0 || f.Seconds <= 0 {
		t.Errorf("%s load: %+v, want %d events, none refused", name, f, stored)
	}
}

func checkQueries(t *testing.T, name string, f QueryFigures, n int) {
	t.Helper()
	if f.Queries != n || f.P50Ms <= 0 || f.P99Ms < f.P50Ms || f.MeanResults <= 0 {
		t.Errorf("%s: %+v, want %d queries, positive latencies and results", name, f, n)
	}
}

// checkMemory checks what is certain. The RSS growth from 20
// subscriptions is below page-level noise, so its sign is not asserted.
func checkMemory(t *testing.T, name string, f MemoryFigures, subs int) {
	t.Helper()
	if f.Subs != subs || f.BaseRSSMiB <= 0 || f.IdleRSSMiB <= 0 {
		t.Errorf("%s memory: %+v, want %d subs and positive RSS", name, f, subs)
	}
}

func checkNote(t *testing.T, rep *RelayReport, want string) {
	t.Helper()
	for _, n := range rep.Notes {
		if strings.Contains(n, want) {
			return
		}
	}
	t.Errorf("notes %q: none contains %q", rep.Notes, want)
}

func checkTable(t *testing.T, rep *RelayReport) {
	t.Helper()
	var b strings.Builder
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"metric", "ingest 4129, 1 ws, window 64", "OK latency window 1 p50/p99 (ms)",
		"REQ->EOSE lessons-of-def", "REQ->EOSE search defs", "n/a", "RSS per 1,000 subs (MiB)", "machine:"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	if _, err := json.Marshal(rep); err != nil {
		t.Errorf("json: %v", err)
	}
}

// TestRelayReport_WriteTable checks the layout on a report built by hand.
func TestRelayReport_WriteTable(t *testing.T) {
	rep := &RelayReport{Options: ReportOptions{Window: 64}, Relays: []*RelayFigures{
		{Name: NameAgentnode, Ingest: IngestFigures{EventsPerSecond: 1100}, SearchDefs: &QueryFigures{P50Ms: 1, P99Ms: 2}},
		{Name: NameKhatru, Ingest: IngestFigures{EventsPerSecond: 550}},
	}}
	var b strings.Builder
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(strings.Fields(b.String()), " ")
	for _, want := range []string{
		"ingest 4129, 1 ws, window 64 (ev/s) 1100 550 2.00",
		"REQ->EOSE search defs p50/p99 ms 1.00/2.00 n/a n/a",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

// BenchmarkPublishLesson publishes pre-signed lessons in-process into a
// relay on t.TempDir's filesystem: one op is one durable relay.Publish.
func BenchmarkPublishLesson(b *testing.B) {
	ctx := context.Background()
	lessons, err := genIngestLessons(ctx, rand.New(rand.NewPCG(1, 2)), 1, b.N)
	if err != nil {
		b.Fatal(err)
	}
	r, err := relay.Open(ctx, relay.Config{DataDir: b.TempDir(), Limits: relay.Limits{EventsPerSecond: -1},
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close(ctx)
	b.ResetTimer()
	for i := range b.N {
		if err := r.Publish(ctx, lessons[i]); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
