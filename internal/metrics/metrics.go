package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// RelayStats are the relay's figures at scrape time.
type RelayStats struct {
	Connections   int              // open websocket connections
	Subscriptions int              // live subscription filters
	SlowConsumers int64            // connections cut off for not reading, since start
	RefusedConns  int64            // websockets refused by the connection limits, since start
	Shed          int64            // websockets and HTTP requests refused while busy, since start
	Refused       map[string]int64 // events refused since start, by NIP-01 prefix
	Batches       int64            // group commits since start
	BatchOps      int64            // writes in them
	CommitSeconds float64          // time spent in them
}

// PeerStats are one peer's sync figures at scrape time.
type PeerStats struct {
	URL                       string
	Connected                 bool
	LastSeen                  time.Time
	Received, Stored, Refused int64 // events pulled from the peer
	Pushed, PushRefused       int64 // events pushed to the peer
}

// Sources are read at every scrape; a nil func leaves its figures out.
type Sources struct {
	Relay     func() RelayStats
	Peers     func() []PeerStats
	Strangers func() StrangerStats // strangers.go
	Node      func() NodeStats     // node.go: agents, leases, queues
	Version   string               // the build's version (agentnode_build_info)
}

// Metrics is the node's registry. It is safe for concurrent use.
type Metrics struct {
	reg       *prometheus.Registry
	stored    *prometheus.CounterVec
	toolCalls *prometheus.CounterVec
	lat       latencies   // latency.go
	http      httpMetrics // http.go
}

// New builds the registry over src. It starts nothing.
func New(src Sources) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(),
		stored: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "agentnode_events_stored_total",
			Help: "Events the relay stored, by kind (kinds the node does not speak count as \"other\")."}, []string{"kind"}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "agentnode_agent_tool_calls_total",
			Help: "Tool calls agents made through capability bindings, by binding type and result."}, []string{"binding", "result"}),
		lat:  newLatencies(),
		http: newHTTPMetrics(),
	}
	for b := range bindingTypes { // every series there from the start: dashboards see 0, not nothing
		for _, r := range []string{"ok", "error"} {
			m.toolCalls.WithLabelValues(b, r)
		}
	}
	m.reg.MustRegister(m.lat.collectors()...)
	m.reg.MustRegister(m.http.collectors()...)
	m.reg.MustRegister(m.stored, m.toolCalls, sourceCollector{src},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Stored counts one stored event (wire it to relay.OnStored; it is quick
// and never blocks).
func (m *Metrics) Stored(evt *nostr.Event) {
	m.stored.WithLabelValues(kindLabel(evt.Kind)).Inc()
}

// ToolCall counts one binding call of type binding and its outcome.
func (m *Metrics) ToolCall(binding string, err error) {
	m.toolCalls.WithLabelValues(bindingLabel(binding), result(err)).Inc()
}

// spokenKinds are the kinds the node speaks (docs/KINDS.md); others are
// folded into "other" so that a client cannot grow the label set.
var spokenKinds = map[int]bool{0: true, 3: true, 5: true, 14: true, 1059: true, 1111: true, 1985: true,
	4129: true, 4199: true, 4201: true, 4290: true, 10050: true, 14199: true, 25910: true, 30199: true, 30333: true}

func kindLabel(kind int) string {
	if spokenKinds[kind] {
		return strconv.Itoa(kind)
	}
	return "other"
}

// bindingTypes are the ACP binding types; any other is "other".
var bindingTypes = map[string]bool{"http_get": true, "http_post": true, "mcp_service": true, "nuwa_a2a": true}

func bindingLabel(b string) string {
	if bindingTypes[b] {
		return b
	}
	return "other"
}
