package state_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/state"
)

// sampleHeap samples the heap's object bytes (live and not yet swept) every
// 200 µs until the returned function is called, which gives the largest
// rise over the level at the start.
func sampleHeap() func() uint64 {
	read := func() uint64 {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	base := read()
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			if v := read(); v > base && v-base > peak.Load() {
				peak.Store(v - base)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(stop)
		<-done
		return peak.Load()
	}
}

// BenchmarkRuntime_PutLarge measures state.create of one large value end
// to end (decode, validation, CRDT ops, materialise, op envelopes, SQLite)
// and reports the Go heap bytes allocated per MiB of value ("B/MiB"; B/op
// is the whole put). SQLite (modernc, pure Go) is included; the objects are
// built before the timer starts. Values: a string in an lww_register (note title), in an
// rga_text (note body), and a string inside a plain object field (card
// extra). "peakheap-B/MiB" is the largest rise of the heap's object bytes
// (live and garbage not yet collected) during one put, sampled, per MiB.
func BenchmarkRuntime_PutLarge(b *testing.B) {
	const mib = 1 << 20
	for _, size := range []int{1 * mib, 8 * mib} {
		text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", size/45+1)[:size]
		for _, bc := range []struct {
			name, uri, capID string
			obj              func(id string) []byte
		}{
			{"lww_string", noteURI, capNote, func(id string) []byte { return note(id, text, "") }},
			{"rga_text", noteURI, capNote, func(id string) []byte { return note(id, "t", text) }},
			{"plain_object", cardURI, capCard, func(id string) []byte {
				o, _ := json.Marshal(map[string]any{"id": id, "title": "t", "extra": map[string]any{"blob": text}})
				return o
			}},
		} {
			b.Run(fmt.Sprintf("%s/%dMiB", bc.name, size/mib), func(b *testing.B) {
				ctx := context.Background()
				rt := openRuntime(b, "", state.Options{})
				c := caller(agentA1, owner1, bc.capID)
				c.Large = true
				objs := make([][]byte, b.N)
				for i := range objs {
					objs[i] = bc.obj(fmt.Sprintf("00000000-0000-4000-8000-%012d", i))
				}
				var before, after runtime.MemStats
				b.ReportAllocs()
				var peak uint64
				b.ResetTimer()
				runtime.ReadMemStats(&before)
				for i := range b.N {
					sampled := sampleHeap()
					if _, err := rt.Create(ctx, c, bc.uri, objs[i]); err != nil {
						b.Fatal(err)
					}
					peak = max(peak, sampled())
				}
				runtime.ReadMemStats(&after)
				b.StopTimer()
				b.ReportMetric(float64(peak)/float64(size/mib), "peakheap-B/MiB")
				perPut := float64(after.TotalAlloc-before.TotalAlloc) / float64(b.N)
				b.ReportMetric(perPut/float64(size/mib), "B/MiB")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(size/mib)/1e6, "ms/MiB")
			})
		}
	}
}
