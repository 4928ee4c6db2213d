package registry_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/agentnode/agentnode/capabilities/registry"
	"github.com/agentnode/agentnode/capabilities/registry/registrytest"
)

const benchPackages = 10_000

// queries are one- and two-word searches over the generated vocabulary.
func benchQueries() []string {
	v := registrytest.Vocabulary
	var qs []string
	for i := 0; i < len(v); i += 3 {
		qs = append(qs, v[i], v[i]+" "+v[(i*7+5)%len(v)])
	}
	return qs
}

// latencies records one duration per operation and reports p50 and p99.
type latencies []time.Duration

func (l latencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	b.ReportMetric(float64(l[len(l)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(l[len(l)*99/100].Microseconds()), "p99-µs")
}

func loadedRegistry(b *testing.B, opts ...registry.Option) *registry.Registry {
	b.Helper()
	rel := registrytest.SeededRelay(b, benchPackages)
	reg := registry.New(rel, opts...)
	if err := reg.Load(context.Background()); err != nil {
		b.Fatal(err)
	}
	if reg.Len() != benchPackages {
		b.Fatalf("loaded %d packages, want %d", reg.Len(), benchPackages)
	}
	return reg
}

// BenchmarkSearch: Registry.Search over 10,000 packages in a real relay,
// with the in-memory word index and with the relay's NIP-50 (bluge).
func BenchmarkSearch(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts []registry.Option
	}{{"index", nil}, {"nip50", []registry.Option{registry.WithRelaySearch()}}} {
		b.Run(bc.name, func(b *testing.B) {
			reg := loadedRegistry(b, bc.opts...)
			qs := benchQueries()
			ctx := context.Background()
			lat := make(latencies, 0, b.N)
			hits := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				res, err := reg.Search(ctx, qs[i%len(qs)], registry.Filters{Limit: 20})
				lat = append(lat, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				hits += len(res)
			}
			b.StopTimer()
			lat.report(b)
			b.ReportMetric(float64(hits)/float64(b.N), "hits/op")
		})
	}
}

// BenchmarkResolve: latest version of a name among 10,000 packages.
func BenchmarkResolve(b *testing.B) {
	reg := loadedRegistry(b)
	names := make([]string, 0, 512)
	for i := 0; i < benchPackages; i += benchPackages / 512 {
		s, _ := registrytest.SeedSpec(i)
		names = append(names, s.Name)
	}
	ctx := context.Background()
	lat := make(latencies, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		_, err := reg.Resolve(ctx, names[i%len(names)], "")
		lat = append(lat, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	lat.report(b)
}

// BenchmarkLoad: reading, verifying and indexing all 10,000 packages.
func BenchmarkLoad(b *testing.B) {
	rel := registrytest.SeededRelay(b, benchPackages)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		reg := registry.New(rel)
		if err := reg.Load(context.Background()); err != nil {
			b.Fatal(err)
		}
		if reg.Len() != benchPackages {
			b.Fatalf("loaded %d", reg.Len())
		}
	}
}
