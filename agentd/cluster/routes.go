package cluster

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
)

// Mount adds the agents' HTTP API, read fresh (another instance may have
// installed or removed an agent an instant ago), its writes to an agent
// forwarded to the holder, and per-agent MCP forwarded.
func (s *Shared) Mount(mux *http.ServeMux, agents, mcp http.Handler) {
	mux.Handle("/api/agents", s.fresh(agents))
	mux.Handle("/api/agents/{agent}", s.fresh(agents))
	mux.Handle("/api/agents/{agent}/{rest...}", s.fresh(s.Forward(agents, APIAgentWrite)))
	mux.Handle("/mcp/agents/{agent}", s.Forward(mcp, PathAgent))
}

// ACPTarget is the target of a single /acp JSON-RPC call over HTTP POST
// (params.target: agent/message, agent/delegate); the body is read (up to
// max bytes) and put back. Batches and websockets are served where they
// arrive, each of their calls forwarded on its own (ConfigureACP).
func ACPTarget(max int64) func(*http.Request) string {
	return func(r *http.Request) string {
		if r.Method != http.MethodPost || r.Body == nil {
			return ""
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, max+1))
		r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err != nil || int64(len(body)) > max {
			return ""
		}
		var call struct {
			Params struct {
				Target string `json:"target"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &call) != nil {
			return ""
		}
		return call.Params.Target
	}
}

// PathAgent is the {agent} path value (CAP, MCP per agent).
func PathAgent(r *http.Request) string { return r.PathValue("agent") }

// APIAgentWrite is the agent of a write to /api/agents/{agent}/... (chat,
// capabilities, nudges, lessons, upgrades: the holder's daemon caches
// them); reads, installs and removals are served by any instance.
func APIAgentWrite(r *http.Request) string {
	if r.Method == http.MethodGet || r.Method == http.MethodHead || r.PathValue("rest") == "" {
		return ""
	}
	return r.PathValue("agent")
}
