package state_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentnode/agentnode/agentd/state"
)

// BenchmarkRuntime_Update measures state.update end to end: patch parse,
// JSON Patch, schema validation before and after, CRDT ops, materialise,
// and one SQLite transaction (WAL, synchronous=FULL: an fsync per update).
func BenchmarkRuntime_Update(b *testing.B) {
	for _, bc := range []struct{ name, patch string }{
		{"lww_title", `[{"op":"replace","path":"/title","value":"title %d"}]`},
		{"rga_text_append", `[{"op":"replace","path":"/body","value":"%s"}]`},
		{"gset_add", `[{"op":"add","path":"/tags/-","value":"tag%d"}]`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			rt := openRuntime(b, "", state.Options{})
			c := caller(agentA1, owner1, capNote)
			if _, err := rt.Create(ctx, c, noteURI, note(id1, "t", "")); err != nil {
				b.Fatal(err)
			}
			body := ""
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var p string
				if bc.name == "rga_text_append" {
					body += "x"
					p = fmt.Sprintf(bc.patch, body)
				} else {
					p = fmt.Sprintf(bc.patch, i)
				}
				if _, err := rt.Update(ctx, c, noteURI, id1, []byte(p)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "updates/s")
		})
	}
}
