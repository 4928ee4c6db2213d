package main

import (
	"context"
	"encoding/json"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/internal/metrics"
	"github.com/agentnode/agentnode/internal/redact"
)

// openMetrics builds the /metrics registry (docs/SERVE.md#metrics) over
// the relay and the peer syncer, and counts every stored event.
func (c *ServeCommand) openMetrics() {
	src := metrics.Sources{Relay: func() metrics.RelayStats {
		s := c.relay.Stats()
		return metrics.RelayStats{Connections: s.Connections, Subscriptions: s.Subscriptions, SlowConsumers: s.SlowConsumers,
			Refused: c.relay.Refusals(), Batches: s.Batches, BatchOps: s.BatchOps, CommitSeconds: s.CommitTime.Seconds()}
	}}
	if c.peers != nil {
		src.Peers = c.peerStats
	}
	src.Strangers = c.strangerStats // serve_strangers.go
	c.rt.metrics = metrics.New(src)
	c.onClose(unhooked(c.relay.OnStored(c.rt.metrics.Stored)))
}

// peerStats are the peer syncer's figures per peer.
func (c *ServeCommand) peerStats() []metrics.PeerStats {
	var out []metrics.PeerStats
	for _, p := range c.peers.Status() {
		out = append(out, metrics.PeerStats{URL: redact.URL(p.URL), // /metrics is public: no credentials in labels
			Connected: p.Connected, LastSeen: p.LastSeen,
			Received: p.Received, Stored: p.Stored, Refused: p.Refused, Pushed: p.Pushed, PushRefused: p.PushRefused})
	}
	return out
}

// countedBindings counts the agents' tool calls through capability
// bindings (agentnode_agent_tool_calls_total). It implements the whole
// agentd.BindingCaller, schemas included (TestServe_MCPBindingOutputSchema).
type countedBindings struct {
	next agentd.BindingCaller
	m    *metrics.Metrics
}

var _ agentd.BindingCaller = countedBindings{}

// OutputSchema is next's.
func (b countedBindings) OutputSchema(ctx context.Context, bd acp.Binding) (json.RawMessage, error) {
	return b.next.OutputSchema(ctx, bd)
}

func (b countedBindings) CallBinding(ctx context.Context, agent, tool string, bd acp.Binding, args json.RawMessage) (json.RawMessage, error) {
	out, err := b.next.CallBinding(ctx, agent, tool, bd, args)
	b.m.ToolCall(bd.Type, err)
	return out, err
}
