package main

import (
	"testing"
	"time"

	"github.com/agentnode/agentnode/internal/testkit"
)

// TestServe_PostgresMetrics_Leases: two instances on one database, one
// agent: /metrics of the instance holding its lease shows one lease and
// one running agent, the other none, and both count it installed.
func TestServe_PostgresMetrics_Leases(t *testing.T) {
	p := startPGPair(t, 3*time.Second)
	p.agent = p.installOn(t, p.nodes[0])
	_, idx := p.holder(t, p.agent, "")
	holder, other := p.nodes[idx], p.nodes[1-idx]
	testkit.WaitFor(t, pgWait, "the holder's gauges", func() bool {
		m := scrape(t, holder.addr)
		return m["agentnode_agent_leases"] == 1 && m["agentnode_agents{state=running}"] == 1
	})
	testkit.WaitFor(t, pgWait, "the other instance's gauges", func() bool {
		m := scrape(t, other.addr)
		return m["agentnode_agents{state=installed}"] == 1
	})
	m := scrape(t, other.addr)
	if m["agentnode_agent_leases"] != 0 || m["agentnode_agents{state=running}"] != 0 {
		t.Errorf("the instance not holding the agent: leases %v, running %v", m["agentnode_agent_leases"], m["agentnode_agents{state=running}"])
	}
	if _, ok := m["agentnode_queue_length{queue=tasks}"]; !ok {
		t.Error("no agentnode_queue_length{queue=tasks}")
	}
}
