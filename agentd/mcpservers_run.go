package agentd

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/capabilities/bindings"
	"github.com/agentnode/agentnode/capabilities/router"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/lessons"
)

// MCPCapPrefix names an approved kind-4200 server as a capability of the
// agent: Tools(ctx, agent, "mcp:<slug>").
const MCPCapPrefix = "mcp:"

// mcpHost runs the agents' approved kind-4200 servers: one binding
// runner of its own, whose endpoints resolve only for approved records.
// Its zero value is ready; close stops every server.
type mcpHost struct {
	mu     sync.Mutex // serialises mcp.json writes
	once   sync.Once
	runner atomic.Pointer[bindings.Runner]
}

// run returns the runner, made on first use; nil after close.
func (h *mcpHost) run(d *Daemon) *bindings.Runner {
	h.once.Do(func() {
		h.runner.Store(bindings.New(bindings.Config{Resolve: d.resolveMCP}))
	})
	return h.runner.Load()
}

// stop ends the session of uri, if the runner exists.
func (h *mcpHost) stop(uri string) {
	if r := h.runner.Load(); r != nil {
		r.Stop(uri)
	}
}

// close stops every server; run makes none after it.
func (h *mcpHost) close() error {
	h.once.Do(func() {})
	if r := h.runner.Load(); r != nil {
		return r.Close()
	}
	return nil
}

// mcpURI is the service_uri of an agent's 4200 server.
func mcpURI(agent, eventID string) string { return "nip-ad:" + agent + "/" + eventID }

// resolveMCP is the runner's endpoint for an approved server (read from
// mcp.json on every call, so a denial or replacement takes effect at once).
func (d *Daemon) resolveMCP(uri string) (bindings.MCPEndpoint, bool) {
	agent, id, ok := strings.Cut(strings.TrimPrefix(uri, "nip-ad:"), "/")
	if !ok || !strings.HasPrefix(uri, "nip-ad:") {
		return bindings.MCPEndpoint{}, false
	}
	list, err := d.MCPServers(agent)
	if err != nil {
		return bindings.MCPEndpoint{}, false
	}
	i := slices.IndexFunc(list, func(s MCPServer) bool { return s.EventID == id && s.runnable() })
	if i < 0 {
		return bindings.MCPEndpoint{}, false
	}
	s := list[i]
	return bindings.MCPEndpoint{Command: s.Command, Env: s.Env, Sandbox: &bindings.Sandbox{Dir: s.Dir, Limits: MCPLimits}}, true
}

// MCPLimits are the resource limits of approved kind-4200 servers (zero
// fields: bindings' defaults).
var MCPLimits bindings.Limits

// mcpToolset is the toolset of the agent's approved server slug: the
// tools its tools/list names, each an mcp_service binding.
// Its prompt (a chat turn on it) is the agent's own, with the server's
// provenance.
func (d *Daemon) mcpToolset(ctx context.Context, a Agent, slug string, nudges []*events.Nudge, prompt string) (*toolset, error) {
	list, err := d.MCPServers(a.PubKey)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(list, func(s MCPServer) bool { return s.Slug == slug })
	if i < 0 {
		return nil, fmt.Errorf("%w: %q", ErrMCPServerNotFound, slug)
	}
	if !list[i].runnable() {
		return nil, fmt.Errorf("%w: %s is %s (agentnode agent mcp approve)", ErrMCPServerNotApproved, slug, list[i].State)
	}
	r := d.mcp.run(d)
	if r == nil {
		return nil, ErrClosed
	}
	uri := mcpURI(a.PubKey, list[i].EventID)
	defs, err := r.MCPTools(ctx, uri)
	if err != nil {
		return nil, err
	}
	s := list[i]
	prompt = strings.TrimRight(prompt, "\n") + fmt.Sprintf("\n\n## MCP server: %s\n(kind 4200 %s by %s, approved by the owner; its tools are yours in this capability)\n\n%s\n",
		s.Name, s.EventID, npubOf(s.Author), strings.TrimSpace(s.Description))
	pkg := &acp.Package{Metadata: acp.Metadata{ID: MCPCapPrefix + slug, Name: s.Name}, Prompt: prompt, Bindings: map[string]acp.Binding{}}
	ts := &toolset{d: d, agent: a, capID: pkg.Metadata.ID, pkg: pkg, bindings: r,
		caller: state.Caller{Agent: a.PubKey, Owner: a.Owner, Scope: state.DefaultScope}}
	for _, t := range defs {
		pkg.Bindings[t.Name] = acp.Binding{Type: acp.BindMCPService, ServiceURI: uri, MCPAction: t.Name}
		ts.offered = append(ts.offered, t.Name)
	}
	ts.allowed = lessons.CombineNudges(ts.offered, nudges...)
	for _, t := range defs {
		if ts.Allowed(t.Name) {
			ts.defs = append(ts.defs, t)
		}
	}
	return ts, nil
}

// mcpRoutes are the agent's approved servers as the chat router sees them:
// no triggers, reached with /switch mcp:<slug>.
func (d *Daemon) mcpRoutes(agent string) []router.Route {
	list, err := d.MCPServers(agent)
	if err != nil {
		d.log.Warn("MCP servers skipped by the router", "agent", agent, "err", err)
	}
	var routes []router.Route
	for _, s := range list {
		if s.runnable() {
			routes = append(routes, router.Route{ID: MCPCapPrefix + s.Slug, Name: s.Name})
		}
	}
	return routes
}
