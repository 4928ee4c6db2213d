// Package metrics exposes the node's figures at /metrics in the Prometheus
// text format, with the official Prometheus Go client: websocket
// connections and slow consumers cut off, events stored (by kind) and
// refused (by NIP-01 reason prefix), peer sync per peer, agent tool calls
// and their errors, latency histograms (publish to OK, REQ to EOSE, agent
// calls by transport), HTTP requests by route pattern and status (HTTP, a
// middleware), the build's version, gauges of agents, leases and queues,
// and the Go runtime's and the process's own.
//
// Figures that live elsewhere (the relay's, the peers') are read when
// scraped, through the funcs of Sources; figures that happen here (stored
// events, tool calls) are counted by the methods the wiring calls:
//
//	m := metrics.New(metrics.Sources{Relay: relayStats, Peers: peerStats})
//	defer rel.OnStored(m.Stored)()
//	mux.Handle("GET /metrics", m.Handler())
//	m.ToolCall("http_get", err)
//	handler = m.HTTP(mux) // by r.Pattern: the label set stays bounded
package metrics
