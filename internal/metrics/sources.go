package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Descriptions of the figures read from Sources at scrape time.
var (
	descConnections = prometheus.NewDesc("agentnode_relay_connections",
		"Open websocket connections.", nil, nil)
	descSubs = prometheus.NewDesc("agentnode_relay_subscriptions",
		"Live subscription filters over all websocket connections.", nil, nil)
	descBatches = prometheus.NewDesc("agentnode_relay_commit_batches_total",
		"Write transactions of the group-commit writer (each fsynced before its OKs).", nil, nil)
	descBatchOps = prometheus.NewDesc("agentnode_relay_commit_writes_total",
		"Events, replacements and deletions committed in those batches (writes / batches = mean batch size).", nil, nil)
	descCommitSecs = prometheus.NewDesc("agentnode_relay_commit_seconds_total",
		"Time spent committing batches, fsync included (seconds / batches = mean commit latency).", nil, nil)
	descSlow = prometheus.NewDesc("agentnode_relay_slow_consumers_total",
		"Websocket connections cut off for not reading (outbound budget exceeded).", nil, nil)
	descRefusedConns = prometheus.NewDesc("agentnode_relay_refused_connections_total",
		"Websocket connections refused by the connection limits (per address and in all).", nil, nil)
	descShed = prometheus.NewDesc("agentnode_relay_shed_total",
		"Websocket connections and HTTP requests refused (503) while memory was near its ceiling.", nil, nil)
	descRefused = prometheus.NewDesc("agentnode_events_refused_total",
		"Events the relay's policies refused, by NIP-01 reason prefix.", []string{"reason"}, nil)
	descPeerUp = prometheus.NewDesc("agentnode_peer_connected",
		"1 while the peer sync is connected to the peer.", []string{"peer"}, nil)
	descPeerSeen = prometheus.NewDesc("agentnode_peer_last_seen_seconds",
		"Unix time the peer last answered (0: never).", []string{"peer"}, nil)
	descPeerEvents = prometheus.NewDesc("agentnode_peer_events_total",
		"Events exchanged with the peer: received, stored, refused (pulled); pushed, push_refused.", []string{"peer", "what"}, nil)
)

// sourceCollector reads Sources when scraped.
type sourceCollector struct{ src Sources }

func (c sourceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descConnections, descSubs, descBatches, descBatchOps, descCommitSecs, descSlow, descRefused, descPeerUp, descPeerSeen, descPeerEvents,
		descDMWraps, descDMMessages, descStrangers, descStrangersDry,
		descRefusedConns, descShed, descBuild, descAgents, descLeases, descQueue} {
		ch <- d
	}
}

func (c sourceCollector) Collect(ch chan<- prometheus.Metric) {
	collectBuild(ch, c.src.Version)
	if c.src.Node != nil {
		collectNode(ch, c.src.Node())
	}
	if c.src.Relay != nil {
		collectRelay(ch, c.src.Relay())
	}
	if c.src.Peers != nil {
		for _, p := range c.src.Peers() {
			collectPeer(ch, p)
		}
	}
	if c.src.Strangers != nil {
		collectStrangers(ch, c.src.Strangers())
	}
}

func collectRelay(ch chan<- prometheus.Metric, s RelayStats) {
	ch <- prometheus.MustNewConstMetric(descConnections, prometheus.GaugeValue, float64(s.Connections))
	ch <- prometheus.MustNewConstMetric(descSubs, prometheus.GaugeValue, float64(s.Subscriptions))
	ch <- prometheus.MustNewConstMetric(descBatches, prometheus.CounterValue, float64(s.Batches))
	ch <- prometheus.MustNewConstMetric(descBatchOps, prometheus.CounterValue, float64(s.BatchOps))
	ch <- prometheus.MustNewConstMetric(descCommitSecs, prometheus.CounterValue, s.CommitSeconds)
	ch <- prometheus.MustNewConstMetric(descSlow, prometheus.CounterValue, float64(s.SlowConsumers))
	ch <- prometheus.MustNewConstMetric(descRefusedConns, prometheus.CounterValue, float64(s.RefusedConns))
	ch <- prometheus.MustNewConstMetric(descShed, prometheus.CounterValue, float64(s.Shed))
	for reason, n := range s.Refused {
		ch <- prometheus.MustNewConstMetric(descRefused, prometheus.CounterValue, float64(n), reason)
	}
}

func collectPeer(ch chan<- prometheus.Metric, p PeerStats) {
	up, seen := 0.0, 0.0
	if p.Connected {
		up = 1
	}
	if !p.LastSeen.IsZero() {
		seen = float64(p.LastSeen.Unix())
	}
	ch <- prometheus.MustNewConstMetric(descPeerUp, prometheus.GaugeValue, up, p.URL)
	ch <- prometheus.MustNewConstMetric(descPeerSeen, prometheus.GaugeValue, seen, p.URL)
	for what, n := range map[string]int64{"received": p.Received, "stored": p.Stored, "refused": p.Refused,
		"pushed": p.Pushed, "push_refused": p.PushRefused} {
		ch <- prometheus.MustNewConstMetric(descPeerEvents, prometheus.CounterValue, float64(n), p.URL, what)
	}
}
