package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/agentnode/agentnode/agentd"
)

// MCPServers are the local agents' NIP-AD kind-4200 servers and the
// owner's decisions on them (*agentd.Daemon satisfies it). A server runs
// only once approved (docs/MCP_SERVERS.md).
type MCPServers interface {
	MCPServers(agent string) ([]agentd.MCPServer, error)
	DecideMCPServer(ctx context.Context, agent, slug string, dec agentd.MCPDecision) (agentd.MCPServer, error)
}

var _ MCPServers = (*agentd.Daemon)(nil)

// consoleMCP is one server on the console, with its agent.
type consoleMCP struct {
	Agent  agentd.Agent
	Server agentd.MCPServer
}

// maxMCPShown bounds the servers the console lists (16 per agent at most
// already; the operator sees every agent's).
const maxMCPShown = 200

// mcpOf lists the servers of the agents the session manages: the
// owner's, or every agent for the operator; pending ones first.
func (s *Site) mcpOf(sess session, owned []agentd.Agent) []consoleMCP {
	if s.cfg.MCP == nil {
		return nil
	}
	agents := owned
	if sess.owner == "" && s.cfg.Installed != nil {
		agents = s.cfg.Installed.List()
	}
	var pending, rest []consoleMCP
	for _, a := range agents {
		list, err := s.cfg.MCP.MCPServers(a.PubKey)
		if err != nil {
			continue
		}
		for _, srv := range list {
			if srv.State == agentd.MCPPending {
				pending = append(pending, consoleMCP{a, srv})
			} else {
				rest = append(rest, consoleMCP{a, srv})
			}
		}
	}
	all := append(pending, rest...)
	return all[:min(len(all), maxMCPShown)]
}

// mountConsoleMCP registers the approve and deny of a kind-4200 server.
func (s *Site) mountConsoleMCP(mux *http.ServeMux) {
	for _, verb := range []string{"approve", "deny"} {
		mux.Handle("POST /console/mcp/{agent}/{server}/"+verb, s.signedInAction(false, func(r *http.Request, sess session) (string, error) {
			return s.decideMCP(r, sess, verb == "approve")
		}))
	}
}

// decideMCP applies the form's decision on the agent's server: the event
// shown and, to approve an untrusted author's, accept_untrusted.
func (s *Site) decideMCP(r *http.Request, sess session, approve bool) (string, error) {
	agent, server := r.PathValue("agent"), r.PathValue("server")
	if s.cfg.MCP == nil {
		return "", fmt.Errorf("this node lists no MCP servers")
	}
	if err := s.mayRevoke(sess, agent); err != nil { // the same rule: the operator, or the agent's owner
		return "", err
	}
	dec := agentd.MCPDecision{Event: strings.TrimSpace(r.FormValue("event")), Approve: approve, AcceptUntrusted: r.FormValue("accept_untrusted") == "on"}
	res, err := s.cfg.MCP.DecideMCPServer(r.Context(), agent, server, dec)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("MCP server %s of %s: %s", res.Slug, short(npub(agent)), res.State), nil
}
