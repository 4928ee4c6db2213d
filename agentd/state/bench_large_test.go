package state_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/agentd/state"
)

// BenchmarkRuntime_PutLarge measures state.create of one large value end
// to end (decode, validation, CRDT ops, materialise, op envelopes, SQLite)
// and reports the Go heap bytes allocated per MiB of value ("B/MiB"; B/op
// is the whole put). SQLite (modernc, pure Go) is included; the objects are
// built before the timer starts. Values: a string in an lww_register (note title), in an
// rga_text (note body), and a string inside a plain object field (card
// extra).
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
				b.ResetTimer()
				runtime.ReadMemStats(&before)
				for i := range b.N {
					if _, err := rt.Create(ctx, c, bc.uri, objs[i]); err != nil {
						b.Fatal(err)
					}
				}
				runtime.ReadMemStats(&after)
				b.StopTimer()
				perPut := float64(after.TotalAlloc-before.TotalAlloc) / float64(b.N)
				b.ReportMetric(perPut/float64(size/mib), "B/MiB")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(size/mib)/1e6, "ms/MiB")
			})
		}
	}
}
