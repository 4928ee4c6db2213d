package agentpg_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/internal/pgtest"
)

// BenchmarkStateSync_Takeover measures the state part of an agent's
// takeover: replaying an agent's op log (docs notes, each created and
// edited once) into a fresh instance's SQLite store, what Handover does
// before the agent runs there. It adds to the lease takeover time
// (agentd/lease BenchmarkTakeover).
//
//	go test -tags libsecp256k1 -run '^$' -bench StateSync_Takeover -benchtime 10x ./agentd/agentpg/
//
// The "again" case is an agent coming back to an instance that ran it
// before: only the ops appended since are replayed.
func BenchmarkStateSync_Takeover(b *testing.B) {
	for _, docs := range []int{10, 100, 1000} {
		b.Run(fmt.Sprint("docs=", docs), func(b *testing.B) { benchTakeover(b, docs, false) })
	}
	b.Run("docs=1000/again", func(b *testing.B) { benchTakeover(b, 1000, true) })
}

func benchTakeover(b *testing.B, docs int, again bool) {
	ctx := context.Background()
	url := pgtest.URL(b)
	a := newInstance(b, url, "a", time.Hour)
	if _, err := a.state.Register(ctx, capNote, []byte(noteSchema)); err != nil {
		b.Fatal(err)
	}
	a.lm.Add(ctx, agentX)
	if err := a.lm.Tick(ctx); err != nil {
		b.Fatal(err)
	}
	for i := range docs {
		if _, err := a.state.CallTool(ctx, callerX, state.ToolCreate, []byte(createArgs(fmt.Sprint("n", i), "t"))); err != nil {
			b.Fatal(err)
		}
		patch := fmt.Sprintf(`{"schema_uri":%q,"id":"n%d","patch":[{"op":"replace","path":"/title","value":"edited"}]}`, noteURI, i)
		if _, err := a.state.CallTool(ctx, callerX, state.ToolUpdate, []byte(patch)); err != nil {
			b.Fatal(err)
		}
	}
	var ops int
	back := newInstance(b, url, "b", time.Hour)
	if _, err := back.sync.Takeover(ctx, agentX); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		fresh := back
		if !again {
			fresh = newInstance(b, url, "b", time.Hour)
		}
		b.StartTimer()
		n, err := fresh.sync.Takeover(ctx, agentX)
		if err != nil {
			b.Fatal(err)
		}
		ops = n
	}
	b.ReportMetric(float64(ops), "ops/takeover")
}

// BenchmarkStateRuntime_Update measures one state.update call of an agent:
// on the SQLite runtime alone (embedded mode), and through StateRuntime,
// which returns only once the call's ops are appended to the op log under
// the agent's lease (Postgres mode).
//
//	go test -tags libsecp256k1 -run '^$' -bench StateRuntime_Update ./agentd/agentpg/
func BenchmarkStateRuntime_Update(b *testing.B) {
	ctx := context.Background()
	in := newInstance(b, pgtest.URL(b), "a", time.Hour)
	if _, err := in.state.Register(ctx, capNote, []byte(noteSchema)); err != nil {
		b.Fatal(err)
	}
	in.lm.Add(ctx, agentX)
	if err := in.lm.Tick(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := in.state.CallTool(ctx, callerX, state.ToolCreate, []byte(createArgs("n1", "t"))); err != nil {
		b.Fatal(err)
	}
	for _, mode := range []struct {
		name string
		rt   interface {
			CallTool(context.Context, state.Caller, string, json.RawMessage) (json.RawMessage, error)
		}
	}{{"sqlite", in.rt}, {"postgres", in.state}} {
		b.Run(mode.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				i++
				patch := fmt.Sprintf(`{"schema_uri":%q,"id":"n1","patch":[{"op":"replace","path":"/title","value":"v%d"}]}`, noteURI, i)
				if _, err := mode.rt.CallTool(ctx, callerX, state.ToolUpdate, []byte(patch)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
