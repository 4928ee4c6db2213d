package agentd_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/state"
)

// BenchmarkDaemon_Tools measures the executor's overhead: building the
// toolset (composition, installed list and parsed package all cached), and
// one state.query through it against the same query on the runtime.
func BenchmarkDaemon_Tools(b *testing.B) {
	cn := openCapsNode(b, agentd.Config{})
	cn.installFile(sign(b, notePackage(b, "1.0.0", "http://example.org/"), cn.author.SK))
	ctx := context.Background()
	query := json.RawMessage(`{"from":"` + noteURI + `"}`)
	b.Run("toolset", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := cn.d.Tools(ctx, cn.agent.Npub, "note"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("toolset+query", func(b *testing.B) {
		for b.Loop() {
			tools, _, err := cn.d.Tools(ctx, cn.agent.Npub, "note")
			if err != nil {
				b.Fatal(err)
			}
			if _, err := tools.CallTool(ctx, "state.query", query); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("runtime-query", func(b *testing.B) {
		c := state.CallerFromACP(cn.agent.Agent.PubKey, cn.owner.PK, noteID, "sc:note", []string{"state.query"})
		for b.Loop() {
			if _, err := cn.rt.CallTool(ctx, c, "state.query", query); err != nil {
				b.Fatal(err)
			}
		}
	})
}
