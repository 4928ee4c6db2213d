package bench

import (
	"context"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"strconv"
	"testing"
)

// BenchmarkQueryLessonsOfDef times REQ->EOSE of {kinds:[4129], #e:[def],
// limit:100} on one websocket, each relay on the same store of
// BENCH_STORED events (default 20,000) in /dev/shm; one op is one query.
// Profile the relay's read path with -cpuprofile.
func BenchmarkQueryLessonsOfDef(b *testing.B) {
	stored := 20_000
	if v, err := strconv.Atoi(os.Getenv("BENCH_STORED")); err == nil && v > 0 {
		stored = v
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(11, 12))
	ds, err := genDataset(ctx, rng, 11, stored, DefaultDefs)
	if err != nil {
		b.Fatal(err)
	}
	for _, o := range openers {
		b.Run(o.name, func(b *testing.B) {
			s, err := serve(ctx, o, b.TempDir()+"/q")
			if err != nil {
				b.Fatal(err)
			}
			defer closeServer(s, &err)
			if f := load(ctx, s.relay, ds.events, o.loads); f.Refused > 0 {
				b.Fatalf("load: %d refused: %s", f.Refused, f.FirstError)
			}
			ws, err := dial(ctx, s.URL)
			if err != nil {
				b.Fatal(err)
			}
			defer ws.close()
			filters := lessonsOfDefFilters(rng, ds.defs, b.N+warmupQueries)
			if _, _, err := timeQueries(ctx, ws, "w", filters[:warmupQueries]); err != nil {
				b.Fatal(err)
			}
			stop := profileQueries(b, o.name)
			b.ResetTimer()
			cpu0 := cpuTime()
			lat, _, err := timeQueries(ctx, ws, "q", filters[warmupQueries:])
			cpu := cpuTime() - cpu0
			b.StopTimer()
			stop()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(percentile(lat, 0.5), "p50-ms")
			b.ReportMetric(cpu.Seconds()*1000/float64(b.N), "cpu-s/1000q")
		})
	}
}

// profileQueries starts a CPU profile of the timed queries alone when
// BENCH_QUERY_PROFILE names a file prefix (the relay's name is appended).
func profileQueries(b *testing.B, relay string) (stop func()) {
	prefix := os.Getenv("BENCH_QUERY_PROFILE")
	if prefix == "" {
		return func() {}
	}
	f, err := os.Create(prefix + "." + relay + ".prof")
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}
