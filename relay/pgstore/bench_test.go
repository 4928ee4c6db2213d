package pgstore

import (
	"context"
	"strconv"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// BenchmarkStore_SaveBatch reports the insert throughput of regular events
// with one transaction per batch of the given size (PGTEST_FSYNC=on for
// durable figures).
func BenchmarkStore_SaveBatch(b *testing.B) {
	for _, size := range []int{1, 100, 1000} {
		b.Run("batch="+strconv.Itoa(size), func(b *testing.B) {
			st, _ := openTestStore(b)
			sk := nostr.GeneratePrivateKey()
			evts := make([]*nostr.Event, b.N)
			for i := range evts {
				evts[i] = &nostr.Event{Kind: 1, CreatedAt: nostr.Now(), Content: strconv.Itoa(i), Tags: nostr.Tags{{"t", "bench"}}}
				evts[i].Sign(sk)
			}
			b.ResetTimer()
			for i := 0; i < len(evts); i += size {
				if _, err := st.SaveBatch(context.Background(), evts[i:min(i+size, len(evts))]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
