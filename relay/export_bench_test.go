package relay

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// BenchmarkExportEvents: ExportEvents over a store of 20,000 notes
// (events/s in the report); and CopyEventStore, the backup's LMDB copy.
//
//	go test -tags libsecp256k1 -run '^$' -bench 'ExportEvents|CopyEventStore' ./relay/
func BenchmarkExportEvents(b *testing.B) {
	dir := benchStore(b, 20_000)
	b.ResetTimer()
	for b.Loop() {
		n := 0
		if err := ExportEvents(context.Background(), dir, nostr.Filter{}, func(*nostr.Event) error { n++; return nil }); err != nil || n != 20_000 {
			b.Fatalf("exported %d: %v", n, err)
		}
	}
	b.ReportMetric(float64(20_000*b.N)/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkCopyEventStore(b *testing.B) {
	dir := benchStore(b, 20_000)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		dst := filepath.Join(b.TempDir(), fmt.Sprint(i))
		os.Mkdir(dst, 0o700)
		if err := CopyEventStore(dir, dst); err != nil {
			b.Fatal(err)
		}
	}
}

// benchStore is a closed data directory holding n kind-1 notes.
func benchStore(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	r, err := Open(context.Background(), Config{DataDir: dir})
	if err != nil {
		b.Fatal(err)
	}
	sk := nostr.GeneratePrivateKey()
	var wg sync.WaitGroup
	for w := range 32 {
		wg.Go(func() {
			for i := w; i < n; i += 32 {
				evt := &nostr.Event{Kind: 1, Content: fmt.Sprintf("note %d %0200d", i, i), CreatedAt: nostr.Now() - nostr.Timestamp(i)}
				evt.Sign(sk)
				if err := r.Publish(context.Background(), evt); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := r.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
	return dir
}
