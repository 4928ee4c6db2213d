package agentd

import (
	"context"
	"net/http"
	"net/url"
)

// handleMCPServers is GET /api/agents/{agent}/mcp.
func (d *Daemon) handleMCPServers(w http.ResponseWriter, r *http.Request) {
	list, err := d.ListMCPServers(r.PathValue("agent"))
	d.reply(w, r, http.StatusOK, list, err)
}

// handleAddMCPServer is POST /api/agents/{agent}/mcp.
func (d *Daemon) handleAddMCPServer(w http.ResponseWriter, r *http.Request) {
	var req MCPServerRequest
	if !d.decode(w, r, &req) {
		return
	}
	res, err := d.AddMCPServer(r.Context(), r.PathValue("agent"), req)
	d.reply(w, r, http.StatusOK, res, err)
}

// handleDecideMCPServer is POST /api/agents/{agent}/mcp/{server}/decision.
func (d *Daemon) handleDecideMCPServer(w http.ResponseWriter, r *http.Request) {
	var dec MCPDecision
	if !d.decode(w, r, &dec) {
		return
	}
	res, err := d.DecideMCPServer(r.Context(), r.PathValue("agent"), r.PathValue("server"), dec)
	d.reply(w, r, http.StatusOK, res, err)
}

// MCPServers lists the agent's kind-4200 servers (see Daemon.MCPServers).
func (c *Client) MCPServers(ctx context.Context, agent string) ([]MCPServer, error) {
	var out []MCPServer
	return out, c.do(ctx, http.MethodGet, agentPath(agent, "/mcp"), nil, &out)
}

// AddMCPServer records a kind-4200 server on the agent, pending.
func (c *Client) AddMCPServer(ctx context.Context, agent string, req MCPServerRequest) (MCPServer, error) {
	var out MCPServer
	return out, c.do(ctx, http.MethodPost, agentPath(agent, "/mcp"), req, &out)
}

// DecideMCPServer approves or denies the agent's server.
func (c *Client) DecideMCPServer(ctx context.Context, agent, server string, dec MCPDecision) (MCPServer, error) {
	var out MCPServer
	return out, c.do(ctx, http.MethodPost, agentPath(agent, "/mcp/"+url.PathEscape(server)+"/decision"), dec, &out)
}
