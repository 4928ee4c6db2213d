package metrics

import "github.com/prometheus/client_golang/prometheus"

// StrangerStats are what strangers' messages cost, at scrape time: the DM
// service's counts (agentd/dm.Stats) and the strangers' budget's
// (agentd/strangers.Stats), each by outcome.
type StrangerStats struct {
	DMWraps    map[string]int64 // gift wraps not answered as messages: garbage, ignored, dropped
	DMMessages map[string]int64 // DMs: answered, refused, rate_limited, notified, over_budget
	Verdicts   map[string]int64 // the budget's verdicts on DMs and 25910 calls: known, allowed, notified, dropped, refused
	Dry        map[string]int64 // refusals by the bucket that was dry: sender, agent, global
}

var (
	descDMWraps = prometheus.NewDesc("agentnode_dm_wraps_total",
		"Gift wraps to local agents not answered as messages: garbage (did not open), ignored (not a DM to answer), dropped (a full queue; caught up at the next start).", []string{"outcome"}, nil)
	descDMMessages = prometheus.NewDesc("agentnode_dm_messages_total",
		"DMs to local agents by outcome: answered, refused (sender policy, revoked), rate_limited, notified (a stranger told its budget ran dry), over_budget (dropped, no model call).", []string{"outcome"}, nil)
	descStrangers = prometheus.NewDesc("agentnode_strangers_total",
		"The strangers' budget's verdicts on DMs and kind-25910 calls: known (no budget), allowed, notified, dropped, refused (the sender policy).", []string{"verdict"}, nil)
	descStrangersDry = prometheus.NewDesc("agentnode_strangers_refused_total",
		"Strangers' messages refused, by the bucket that had no token: sender, agent, global.", []string{"bucket"}, nil)
)

func collectStrangers(ch chan<- prometheus.Metric, s StrangerStats) {
	for _, m := range []struct {
		desc *prometheus.Desc
		vals map[string]int64
	}{{descDMWraps, s.DMWraps}, {descDMMessages, s.DMMessages}, {descStrangers, s.Verdicts}, {descStrangersDry, s.Dry}} {
		for label, n := range m.vals {
			ch <- prometheus.MustNewConstMetric(m.desc, prometheus.CounterValue, float64(n), label)
		}
	}
}
