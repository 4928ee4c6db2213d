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

// BenchmarkRuntime_Read measures the reads a stranger can trigger, with the
// visibility check in their SQL: state.get of one document and a
// state.query page (limit 20) over 200 documents, for the agent itself and
// for a requester (a stranger: public documents only).
func BenchmarkRuntime_Read(b *testing.B) {
	ctx := context.Background()
	rt := openRuntime(b, "", state.Options{})
	agent := caller(agentA1, owner1, capNote)
	for i := range 200 {
		id := fmt.Sprintf("%08d-1111-4111-8111-111111111111", i)
		if _, err := rt.Create(ctx, agent, noteURI, note(id, fmt.Sprintf("t%d", i), "b")); err != nil {
			b.Fatal(err)
		}
	}
	query := []byte(fmt.Sprintf(`{"from":%q,"limit":20}`, noteURI))
	for _, bc := range []struct {
		name string
		c    state.Caller
	}{{"agent", agent}, {"requester", requesterOf(agent, "r1")}} {
		b.Run("get/"+bc.name, func(b *testing.B) {
			for b.Loop() {
				_, err := rt.Get(ctx, bc.c, noteURI, "00000007-1111-4111-8111-111111111111")
				if err != nil && bc.name == "agent" {
					b.Fatal(err)
				}
			}
		})
		b.Run("query/"+bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := rt.Query(ctx, bc.c, query); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
