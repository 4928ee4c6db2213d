// Package metrics exposes the node's figures at /metrics in the Prometheus
// text format, with the official Prometheus Go client: websocket
// connections and slow consumers cut off, events stored (by kind) and
// refused (by NIP-01 reason prefix), peer sync per peer, agent tool calls
// and their errors, and the Go runtime's and the process's own.
//
// Figures that live elsewhere (the relay's, the peers') are read when
// scraped, through the funcs of Sources; figures that happen here (stored
// events, tool calls) are counted by the methods the wiring calls:
//
//	m := metrics.New(metrics.Sources{Relay: relayStats, Peers: peerStats})
//	defer rel.OnStored(m.Stored)()
//	mux.Handle("GET /metrics", m.Handler())
//	m.ToolCall("http_get", err)
package metrics
