package mcpserver

import "net/http"

// Mux is where Mount puts the endpoint: *http.ServeMux, or the relay
// (*relay.Relay has Handle).
type Mux interface {
	Handle(pattern string, h http.Handler)
}

// Mount serves h (from New) at /mcp and under /mcp/ (the agent endpoints).
func Mount(mux Mux, h http.Handler) {
	mux.Handle("/mcp", h)
	mux.Handle("/mcp/", h)
}
