package main

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/agentnode/agentnode/agentd/dm"
	"github.com/agentnode/agentnode/capabilities/bindings"
	"github.com/agentnode/agentnode/internal/metrics"
	"github.com/agentnode/agentnode/internal/redact"
)

// openMetrics builds the /metrics registry (docs/SERVE.md#metrics) over
// the relay and the peer syncer, and counts every stored event.
func (c *ServeCommand) openMetrics() {
	src := metrics.Sources{Relay: func() metrics.RelayStats {
		s := c.relay.Stats()
		return metrics.RelayStats{Connections: s.Connections, Subscriptions: s.Subscriptions, SlowConsumers: s.SlowConsumers,
			RefusedConns: s.RefusedConns, Shed: s.Shed,
			Refused: c.relay.Refusals(), Batches: s.Batches, BatchOps: s.BatchOps, CommitSeconds: s.CommitTime.Seconds()}
	}, Node: c.nodeStats, Version: Version}
	if c.peers != nil {
		src.Peers = c.peerStats
	}
	src.Strangers = c.strangerStats // serve_strangers.go
	c.rt.metrics = metrics.New(src)
	c.onClose(unhooked(c.relay.OnStored(c.rt.metrics.Stored)))
	c.relay.OnLatency(c.rt.metrics.Published, c.rt.metrics.EOSE)
}

// nodeStats are the node's gauges: agents, leases, queues. Parts not open
// yet (a scrape during the start) count as none.
func (c *ServeCommand) nodeStats() metrics.NodeStats {
	var s metrics.NodeStats
	if c.daemon == nil {
		return s
	}
	s.Agents = len(c.daemon.List())
	s.Running = len(c.agentKeys()) // --postgres: the ones running here
	s.Leases = c.cluster.Held()
	s.Queues = map[string]int{"tasks": c.activeTasks()}
	return s
}

// activeTasks is the number of ACP tasks assigned and not finished, on
// every agent of the node (bounded by a short timeout: /metrics is public).
func (c *ServeCommand) activeTasks() int {
	if c.acp == nil || c.acp.tasks == nil {
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	active, err := c.acp.tasks.Active(ctx)
	if err != nil {
		return 0
	}
	n := 0
	for _, k := range active {
		n += k
	}
	return n
}

// timedRPC is serveRPC (a kind-25910 call) observed as an agent call.
func (c *ServeCommand) timedRPC(ctx context.Context, agent, from, method string, params json.RawMessage) (any, error) {
	start := time.Now()
	out, err := c.serveRPC(ctx, agent, from, method, params)
	c.rt.metrics.AgentCall("a2a", err, time.Since(start))
	return out, err
}

// timedDM is respondDM (a NIP-17 DM) observed as an agent call; a DM the
// agent does not answer (dm.ErrNoAnswer) is no call.
func (c *ServeCommand) timedDM(ctx context.Context, agent, from, text string) (string, error) {
	start := time.Now()
	answer, err := c.respondDM(ctx, agent, from, text)
	if !errors.Is(err, dm.ErrNoAnswer) {
		c.rt.metrics.AgentCall("dm", err, time.Since(start))
	}
	return answer, err
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

// countToolCall counts an agent's tool call through a capability binding
// (agentnode_agent_tool_calls_total): a bindings.Config.OnCall hook, so
// the runner serves the daemon as it is, schemas included
// (TestServe_MCPBindingOutputSchema).
func (c *ServeCommand) countToolCall(_ context.Context, call bindings.Call, err error) {
	c.rt.metrics.ToolCall(call.Binding.Type, err)
}
