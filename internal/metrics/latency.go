package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// latencyBuckets (seconds) span a local commit (~1 ms) to a slow model
// call (a minute): the same buckets for every latency histogram, so that
// dashboards compare them.
var latencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// Transports an agent call arrives over (agentnode_agent_call_seconds);
// any other is "other".
var transports = map[string]bool{"acp": true, "cap": true, "mcp": true, "chat": true, "a2a": true, "dm": true}

// latencies are the histograms the wiring feeds.
type latencies struct {
	publish   *prometheus.HistogramVec
	eose      prometheus.Histogram
	agentCall *prometheus.HistogramVec
}

func newLatencies() latencies {
	return latencies{
		publish: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "agentnode_relay_publish_seconds",
			Help:    "Websocket EVENT to OK (group commit and fsync included), by verdict: accepted, refused.",
			Buckets: latencyBuckets}, []string{"result"}),
		eose: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "agentnode_relay_req_eose_seconds",
			Help:    "Websocket REQ to EOSE: the stored events' query and their paced sending.",
			Buckets: latencyBuckets}),
		agentCall: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "agentnode_agent_call_seconds",
			Help:    "Calls to local agents, request to answer, by transport (acp, cap, mcp, chat: HTTP; a2a: kind 25910; dm: NIP-17) and result (ok, error).",
			Buckets: latencyBuckets}, []string{"transport", "result"}),
	}
}

func (l latencies) collectors() []prometheus.Collector {
	return []prometheus.Collector{l.publish, l.eose, l.agentCall}
}

// Published observes one websocket EVENT answered with OK (wire it to
// relay.OnLatency).
func (m *Metrics) Published(ok bool, d time.Duration) {
	result := "accepted"
	if !ok {
		result = "refused"
	}
	m.lat.publish.WithLabelValues(result).Observe(d.Seconds())
}

// EOSE observes one REQ answered up to its EOSE (wire it to
// relay.OnLatency).
func (m *Metrics) EOSE(d time.Duration) {
	m.lat.eose.Observe(d.Seconds())
}

// AgentCall observes one call to a local agent over transport.
func (m *Metrics) AgentCall(transport string, err error, d time.Duration) {
	if !transports[transport] {
		transport = "other"
	}
	m.lat.agentCall.WithLabelValues(transport, result(err)).Observe(d.Seconds())
}

func result(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}
