package main

import (
	"slices"
	"testing"
	"time"

	"github.com/agentnode/agentnode/internal/testkit"
)

// Two served nodes whose agents beat every second and stay available for
// 5 s after their latest heartbeat ("directory" section); B pushes its
// heartbeats to A (--peer). When B's heartbeats stop — no offline beat, as
// after a crash — A's ranking drops B's agent once the TTL passes, and
// keeps its own.
func TestHeartbeat_E2E_StoppedAgentLeavesRanking(t *testing.T) {
	aAddr := freeLoopbackAddr(t)
	cfg := configFile(t, map[string]any{"directory": map[string]any{"heartbeat_seconds": 1, "ttl_seconds": 5}})
	b := startEndpointNode(t, "Beating", "--config", cfg, "--peer", "ws://"+aAddr)
	a := startEndpointNode(t, "Watcher", "--listen", aAddr, "--config", cfg)
	acp := a.url(pathACP)

	search := func() []string {
		r := rpcPost(t, acp, a.token, "tools/call", map[string]any{"name": "agentSearch", "arguments": map[string]any{}})
		if r.Error != nil {
			t.Fatalf("agentSearch: %+v", r.Error)
		}
		return searchedAgents(t, r.Result)
	}
	waitSearchFinds(t, acp, a.token, b.agentPK(), map[string]any{})
	// For longer than the TTL, B's one-second beats keep its agent ranked.
	start := time.Now()
	testkit.WaitFor(t, e2eWait, "6 s with B's agent ranked", func() bool {
		if !slices.Contains(search(), b.agentPK()) {
			t.Fatalf("B's agent left A's ranking while beating (after %v)", time.Since(start))
		}
		return time.Since(start) > 6*time.Second
	})

	b.rt.silence() // B's heartbeats stop, without an offline beat
	testkit.WaitFor(t, e2eWait, "B's silent agent to leave A's ranking", func() bool { return !slices.Contains(search(), b.agentPK()) })
	if !slices.Contains(search(), a.agentPK()) {
		t.Fatalf("A's own agent left the ranking too: %v", search())
	}
}
