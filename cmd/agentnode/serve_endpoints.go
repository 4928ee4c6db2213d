package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/cluster"
	"github.com/agentnode/agentnode/capabilities/cap"
	"github.com/agentnode/agentnode/capabilities/mcpserver"
	"github.com/agentnode/agentnode/capabilities/registry"
	"github.com/agentnode/agentnode/internal/httpauth"
	"github.com/agentnode/agentnode/relay/policies"
)

// The node's protocol endpoints beside the relay. They sit in front of the
// relay (serveMux) because the relay takes every websocket upgrade as a
// Nostr connection, and /acp and /cap/agents/{agent} speak JSON-RPC over
// websockets too.
const (
	pathACP = cluster.PathACP       // Agent Context Protocol (docs/AGENT-CONTEXT-PROTOCOL.md)
	pathCAP = "/cap/agents/{agent}" // CAP over JSON-RPC, per agent (docs/CAP.md)
)

// openRegistry loads the capability registry from the relay and keeps it
// live (docs/REGISTRY.md). The daemon resolves installs through it. Its
// seen log (<data>/registry/seen.jsonl) remembers which author of a name
// this node saw first; the trust allowlist's authors are preferred.
func (c *ServeCommand) openRegistry(ctx context.Context, logger *slog.Logger) error {
	seen, err := registry.OpenSeenLog(filepath.Join(c.Config.DataDir, "registry", "seen.jsonl"))
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	c.onClose(closeErr(seen.Close))
	c.rt.reg = registry.New(c.verifyReader(), registry.WithLogger(logger.With("component", "registry")),
		registry.WithSeenLog(seen), registry.WithPreferredAuthors(c.trustConfig().Allowlist...))
	c.onClose(unhooked(c.relay.OnStored(c.rt.reg.Index))) // before Load: nothing stored meanwhile is missed
	if err := c.rt.reg.Load(ctx); err != nil {
		return fmt.Errorf("serve: load the capability registry: %w", err)
	}
	logger.Info("capability registry loaded", "packages", c.rt.reg.Len())
	return nil
}

// mountEndpoints builds the top-level handler: /acp, CAP and MCP, then
// the relay for everything else.
func (c *ServeCommand) mountEndpoints(logger *slog.Logger) (http.Handler, error) {
	token, err := agentd.ReadToken(c.Config.DataDir)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	host := c.agentHost()
	hs := c.httpConfig()
	mux := http.NewServeMux()
	// --postgres: requests for an agent another instance runs go there (agentd/cluster)
	mux.Handle(pathACP, c.cluster.Forward(c.acp.svc, cluster.ACPTarget(hs.MaxBodyBytes)))
	mux.Handle(pathCAP, c.cluster.Forward(cap.Handler(host, func(r *http.Request, _ string) error {
		return httpauth.Equal(token, httpauth.Token(r))
	}, hs.jsonrpcOptions(logger.With("component", "cap"))), cluster.PathAgent))
	mcp := mcpserver.New(c.rt.reg, host, mcpserver.Options{Name: "agentnode", Version: Version,
		Logger: logger.With("component", "mcp"), MaxBodyBytes: hs.MaxBodyBytes,
		SessionIdle: seconds(hs.MCPSessionIdleSeconds), MaxSessions: hs.MCPMaxSessions,
		MaxSessionsPerIP: hs.MCPMaxSessionsPerIP, SessionUnused: seconds(hs.MCPSessionUnusedSeconds),
		ClientIP:  func(r *http.Request) string { return policies.ClientIP(r, hs.trusted) },
		Authorize: func(_ context.Context, _, tok string) error { return httpauth.Equal(token, tok) }})
	mcpserver.Mount(mux, mcp)
	c.cluster.Mount(mux, c.relay, mcp) // --postgres: the agents' API read fresh, writes and per-agent MCP forwarded
	c.mountWeb(mux, token, logger)
	mux.Handle("/", c.blobs.Wrap(c.relay))           // Blossom's paths (serve_blossom.go), else the relay
	return c.rt.metrics.HTTP(c.relay.Shed(mux)), nil // 503 while memory is near its ceiling (relay/conns.go); counted by route (serve_metrics.go)
}
