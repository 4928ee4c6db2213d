package lmdbw

import (
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/nbd-wtf/go-nostr"
)

// BenchmarkCommit measures one durable (synced) batch commit of small
// events, in the environment as eventstore opens it (MDB_WRITEMAP) and as
// Open opens it (pages written with pwrite at commit), on the disk under
// $LMDBW_BENCH_DIR (default: the system's temporary directory). One op is
// one batch: ns/op is the cost of a commit of that many events; cpu-µs/event
// is the process's user+system CPU (the event generation included).
//
//	go test -tags libsecp256k1 ./relay/internal/lmdbw -run '^$' -bench Commit -count 6
func BenchmarkCommit(b *testing.B) {
	for _, mode := range []string{"writemap", "pwrite"} {
		for _, batch := range []int{1, 64, 256, 1024} {
			b.Run(fmt.Sprintf("%s/batch=%d", mode, batch), func(b *testing.B) {
				benchCommit(b, mode == "writemap", batch)
			})
		}
	}
}

func benchCommit(b *testing.B, writeMap bool, batch int) {
	dir, err := os.MkdirTemp(os.Getenv("LMDBW_BENCH_DIR"), "lmdbw-bench-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	var flags uint
	if writeMap {
		flags = lmdb.WriteMap // as eventstore/lmdb opens its environment
	}
	w, err := open(dir, 0, flags)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	sk := nostr.GeneratePrivateKey()
	pool := make([]*nostr.Event, 4096) // signed once; re-keyed per batch below
	for i := range pool {
		pool[i] = &nostr.Event{Kind: 4129, CreatedAt: nostr.Timestamp(1_700_000_000 + i),
			Tags: nostr.Tags{{"title", "lesson"}, {"e", fmt.Sprintf("%064x", i)}}, Content: "a lesson of a few words"}
		pool[i].Sign(sk)
	}
	var before, after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		ops := make([]*Op, batch)
		for i := range ops {
			evt := *pool[(n*batch+i)%len(pool)]
			evt.ID = fmt.Sprintf("%016x%048x", n*batch+i, 0) // a fresh id (the index keys its first 8 bytes): every op stores
			ops[i] = &Op{Action: Save, Event: &evt}
		}
		if err := w.Commit(ops); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano()
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(cpu)/1e3/float64(b.N*batch), "cpu-µs/event")
}
