package agentd_test

import (
	"context"
	"testing"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/events"
)

// BenchmarkMCPServerStartSandboxed: from nothing running to the tools of
// an approved kind-4200 server (this binary re-executed with the limits,
// the server's execve, the MCP handshake, tools/list), then its stop (a
// new event of the server, pending, stops it).
func BenchmarkMCPServerStartSandboxed(b *testing.B) {
	bin := mcpSandboxServer(b)
	m := newMCPNode(b, agentd.Config{})
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		id := m.announce(m.owner, events.MCPServer{Name: "probe", Command: []string{bin, "--run", string(rune('a' + i%26))}})
		if _, err := m.d.AddMCPServer(ctx, m.agent.PubKey, agentd.MCPServerRequest{Server: id}); err != nil {
			b.Fatal(err)
		}
		if _, err := m.d.DecideMCPServer(ctx, m.agent.PubKey, "probe", agentd.MCPDecision{Event: id, Approve: true}); err != nil {
			b.Fatal(err)
		}
		if _, _, err := m.d.Tools(ctx, m.agent.PubKey, "mcp:probe"); err != nil {
			b.Fatal(err)
		}
	}
}
