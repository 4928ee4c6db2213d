package metrics

import (
	"runtime"

	"github.com/prometheus/client_golang/prometheus"
)

// NodeStats are the node's gauges at scrape time.
type NodeStats struct {
	Agents int // agents installed on this node
	// Running are the agents running on this instance (with --postgres,
	// those whose lease it holds; else every installed agent).
	Running int
	Leases  int // agent leases this instance holds (0 without --postgres)
	// Queues are the lengths of the node's work queues by name: "tasks"
	// (ACP tasks assigned and not finished).
	Queues map[string]int
}

var (
	descBuild = prometheus.NewDesc("agentnode_build_info",
		"Always 1; the labels name the running build: version (main.Version, stamped by -ldflags) and go_version.", []string{"version", "go_version"}, nil)
	descAgents = prometheus.NewDesc("agentnode_agents",
		"Agents on this node: installed; running (on this instance: with --postgres, the ones whose lease it holds).", []string{"state"}, nil)
	descLeases = prometheus.NewDesc("agentnode_agent_leases",
		"Agent leases this instance holds (--postgres; 0 on an embedded node).", nil, nil)
	descQueue = prometheus.NewDesc("agentnode_queue_length",
		"Work waiting or in progress, by queue: tasks (ACP tasks assigned and not finished).", []string{"queue"}, nil)
)

func collectBuild(ch chan<- prometheus.Metric, version string) {
	if version == "" {
		version = "unknown"
	}
	ch <- prometheus.MustNewConstMetric(descBuild, prometheus.GaugeValue, 1, version, runtime.Version())
}

func collectNode(ch chan<- prometheus.Metric, s NodeStats) {
	ch <- prometheus.MustNewConstMetric(descAgents, prometheus.GaugeValue, float64(s.Agents), "installed")
	ch <- prometheus.MustNewConstMetric(descAgents, prometheus.GaugeValue, float64(s.Running), "running")
	ch <- prometheus.MustNewConstMetric(descLeases, prometheus.GaugeValue, float64(s.Leases))
	for q, n := range s.Queues {
		ch <- prometheus.MustNewConstMetric(descQueue, prometheus.GaugeValue, float64(n), q)
	}
}
