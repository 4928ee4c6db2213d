package relay

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// BenchmarkRelay_QuerySync times store reads of 100 events (in-process,
// no websocket) over 20,000 stored notes, ten to a second (so that every
// answer cuts a second): by kind, and by a tag 1 in 4 notes carries. The
// same file runs on the build before the bounded reads, for the figures
// in docs/RELAY.md ("Bounded reads").
func BenchmarkRelay_QuerySync(b *testing.B) {
	ctx := context.Background()
	tr, err := Open(ctx, Config{DataDir: b.TempDir(), Limits: Limits{EventsPerSecond: -1}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close(ctx)
	sk := nostr.GeneratePrivateKey()
	now := nostr.Now()
	for i := range 20_000 {
		tags := nostr.Tags{{"client", "bench"}}
		if i%4 == 0 {
			tags = append(tags, nostr.Tag{"t", "quarter"})
		}
		evt := &nostr.Event{Kind: 1, CreatedAt: now - nostr.Timestamp(i/10), Tags: tags, Content: fmt.Sprint("note ", i, " of a benchmark with some words in it")}
		evt.Sign(sk)
		if err := tr.Publish(ctx, evt); err != nil {
			b.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		f    nostr.Filter
	}{
		{"kind", nostr.Filter{Kinds: []int{1}, Limit: 100}},
		{"tag", nostr.Filter{Kinds: []int{1}, Tags: nostr.TagMap{"t": {"quarter"}}, Limit: 100}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			cpu0 := cpuTime()
			for i := 0; b.Loop(); i++ {
				until := now - nostr.Timestamp(i%1500)
				f := tc.f
				f.Until = &until
				got, err := tr.QuerySync(ctx, f)
				if err != nil || len(got) != 100 {
					b.Fatalf("%d events, %v", len(got), err)
				}
			}
			// CPU time is steadier than wall time on a shared machine
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
