package mcpserver

import (
	"context"
	"fmt"

	"github.com/agentnode/agentnode/capabilities/cap"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// AgentServer builds the MCP server of one agent: one tool per CAP
// capability (tools/list = capability.list, tools/call =
// capability.invoke) and its manifest as a resource (resources/read =
// capability.describe), as /mcp/agents/{agent} serves it. Every transport
// that serves an agent over MCP (streamable HTTP here, ContextVM over
// Nostr in agentd/contextvm) builds its sessions' servers with it, so an
// agent has one MCP surface whatever carries it. opts are defaulted as
// New's; access checks are the caller's.
func AgentServer(ctx context.Context, host *cap.Host, agent string, opts Options) (*mcp.Server, error) {
	if opts.Name == "" {
		opts.Name = "agentnode"
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	a := &agentEndpoint{host: host, opts: withDefaults(opts)}
	return a.build(ctx, agent)
}

// build is AgentServer on the endpoint's host and options.
func (a *agentEndpoint) build(ctx context.Context, agent string) (*mcp.Server, error) {
	ms, err := a.host.List(ctx, agent)
	if err != nil {
		return nil, fmt.Errorf("mcpserver: agent capabilities: %w", err)
	}
	s := mcp.NewServer(implementation(a.opts), &mcp.ServerOptions{Logger: a.opts.Logger})
	served := map[string]bool{}
	for alias, m := range ToolNames(ms) {
		if err := a.addTool(s, agent, alias, m); err != nil {
			a.opts.Logger.Warn("mcp: capability not served", "capability", m.CapabilityID, "err", err)
			continue
		}
		served[alias] = true
		addManifestResource(s, alias, m)
	}
	s.AddReceivingMiddleware(unknownToolNotFound(served))
	return s, nil
}
