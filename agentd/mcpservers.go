package agentd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/agentnode/agentnode/agentd/internal/atomicfile"
	"github.com/agentnode/agentnode/events"
)

// MCP servers (NIP-AD kind 4200): a command an agent may run as an MCP
// server over stdio. A 4200 never runs by being stored, nor by being
// added to an agent: adding records it pending, shown with the exact
// command, arguments, environment names, author and whether the agent
// trusts that author. Only the owner's approval of that exact event (its
// id, command and arguments) makes it an mcp_service binding of the
// agent; a new event for the same server is pending again. An approved
// server runs sandboxed (capabilities/bindings.Sandbox) in
// <data>/agents/<agent>/mcp/<slug>/, and its tools are the capability
// "mcp:<slug>" (Daemon.Tools). docs/MCP_SERVERS.md.

// MCP server states.
const (
	MCPPending  = "pending"
	MCPApproved = "approved"
	MCPDenied   = "denied"
)

// maxMCPServers bounds the servers recorded on one agent.
const maxMCPServers = 16

var (
	// ErrMCPServerNotFound: the agent has no MCP server of that name.
	ErrMCPServerNotFound = errors.New("no such MCP server on this agent")
	// ErrMCPServerChanged: the decision names another event than the one
	// pending (the server was announced again since it was shown).
	ErrMCPServerChanged = errors.New("the MCP server's pending event is not the one decided on: review it again")
	// ErrUntrustedMCPServer: approving a server whose author the agent
	// does not trust needs accept_untrusted.
	ErrUntrustedMCPServer = errors.New("the MCP server's author is not trusted by this agent: accept it explicitly")
	// ErrMCPServerNotApproved: the server is pending or denied: it does not run.
	ErrMCPServerNotApproved = errors.New("the MCP server is not approved by the agent's owner")
)

// MCPServerRequest adds a kind-4200 server to an agent (pending).
type MCPServerRequest struct {
	Server string `json:"server"` // nevent, note or hex id of a kind 4200 on the local relay
}

// MCPDecision is the owner's answer on a pending server.
type MCPDecision struct {
	Event           string `json:"event"` // the event id shown (a prefix of 8 or more hex digits will do)
	Approve         bool   `json:"approve"`
	AcceptUntrusted bool   `json:"accept_untrusted,omitempty"` // approve although the author is not trusted
}

// MCPServer is a kind-4200 server recorded on an agent.
type MCPServer struct {
	Slug          string    `json:"slug"` // the name reduced to [A-Za-z0-9._-]: the CLI's and the capability's name
	Name          string    `json:"name"`
	Description   string    `json:"description,omitempty"`
	EventID       string    `json:"event_id"`
	Author        string    `json:"author"`
	AuthorTrusted bool      `json:"author_trusted"`
	Command       []string  `json:"command"` // argv, exactly as it runs
	Env           []string  `json:"env,omitempty"`
	State         string    `json:"state"`
	Digest        string    `json:"digest,omitempty"` // sha256 of event id, argv and env at approval
	Dir           string    `json:"dir"`
	AddedAt       time.Time `json:"added_at"`
	DecidedAt     time.Time `json:"decided_at,omitzero"`
}

// EnvNames are the names of the environment variables the server is given.
func (s MCPServer) EnvNames() []string {
	names := make([]string, 0, len(s.Env))
	for _, kv := range s.Env {
		k, _, _ := strings.Cut(kv, "=")
		names = append(names, k)
	}
	return names
}

// digest binds an approval to the event and what it runs.
func (s MCPServer) digest() string {
	b, _ := json.Marshal([]any{s.EventID, s.Command, s.Env})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// runnable: approved, and still the command that was approved.
func (s MCPServer) runnable() bool {
	return s.State == MCPApproved && s.Digest == s.digest()
}

// AddMCPServer records the kind-4200 server on the agent, pending the
// owner's decision. The same event again changes nothing; another event
// of a server of the same name replaces the record, pending again (and
// stops the server if it ran).
func (d *Daemon) AddMCPServer(ctx context.Context, agent string, req MCPServerRequest) (MCPServer, error) {
	a, err := d.Lookup(agent)
	if err != nil {
		return MCPServer{}, err
	}
	srv, err := d.mcpServerEvent(ctx, req.Server)
	if err != nil {
		return MCPServer{}, err
	}
	rec := MCPServer{Slug: mcpSlug(srv.Name), Name: srv.Name, Description: srv.Description, EventID: srv.ID,
		Author: srv.PubKey, AuthorTrusted: d.trustsAuthor(a, srv.PubKey), Command: srv.Command, Env: srv.Env,
		State: MCPPending, AddedAt: now()}
	rec.Dir = filepath.Join(d.cfg.DataDir, "agents", a.PubKey, "mcp", rec.Slug)
	d.mcp.mu.Lock()
	defer d.mcp.mu.Unlock()
	return d.putMCPServer(ctx, a, rec)
}

// putMCPServer adds or replaces rec; the caller holds d.mcp.mu.
func (d *Daemon) putMCPServer(ctx context.Context, a Agent, rec MCPServer) (MCPServer, error) {
	list, err := d.MCPServers(a.PubKey)
	if err != nil {
		return MCPServer{}, err
	}
	i := slices.IndexFunc(list, func(s MCPServer) bool { return s.Slug == rec.Slug })
	switch {
	case i >= 0 && list[i].EventID == rec.EventID:
		return list[i], nil
	case i >= 0:
		d.mcp.stop(mcpURI(a.PubKey, list[i].EventID))
		list[i] = rec
	case len(list) >= maxMCPServers:
		return MCPServer{}, fmt.Errorf("%w: the agent has %d MCP servers, the most it may have", ErrBadRequest, maxMCPServers)
	default:
		list = append(list, rec)
	}
	if err := d.saveMCPServers(a.PubKey, list); err != nil {
		return MCPServer{}, err
	}
	if i >= 0 {
		d.capsChanged(ctx, a.PubKey) // a replaced approved server leaves the router
	}
	d.log.Info("MCP server pending the owner's approval", "agent", a.PubKey, "server", rec.Slug, "event", rec.EventID,
		"author", rec.Author, "trusted", rec.AuthorTrusted, "command", strings.Join(rec.Command, " "))
	return rec, nil
}

// DecideMCPServer approves or denies the agent's pending server slug. The
// decision must name the event shown (ErrMCPServerChanged otherwise);
// approving an untrusted author's server needs AcceptUntrusted. Denying
// stops the server if it ran.
func (d *Daemon) DecideMCPServer(ctx context.Context, agent, slug string, dec MCPDecision) (MCPServer, error) {
	a, err := d.Lookup(agent)
	if err != nil {
		return MCPServer{}, err
	}
	d.mcp.mu.Lock()
	defer d.mcp.mu.Unlock()
	list, err := d.MCPServers(a.PubKey)
	if err != nil {
		return MCPServer{}, err
	}
	i := slices.IndexFunc(list, func(s MCPServer) bool { return s.Slug == slug || s.Name == slug })
	if i < 0 {
		return MCPServer{}, fmt.Errorf("%w: %q", ErrMCPServerNotFound, slug)
	}
	rec, err := decide(list[i], dec)
	if err != nil {
		return MCPServer{}, err
	}
	list[i] = rec
	if err := d.saveMCPServers(a.PubKey, list); err != nil {
		return MCPServer{}, err
	}
	if rec.State != MCPApproved {
		d.mcp.stop(mcpURI(a.PubKey, rec.EventID))
	}
	d.capsChanged(ctx, a.PubKey) // the chat router's routes
	d.log.Info("MCP server decided", "agent", a.PubKey, "server", rec.Slug, "event", rec.EventID, "state", rec.State)
	return rec, nil
}

// decide applies dec to rec.
func decide(rec MCPServer, dec MCPDecision) (MCPServer, error) {
	id := strings.ToLower(strings.TrimSpace(dec.Event))
	if len(id) < 8 || !strings.HasPrefix(rec.EventID, id) {
		return MCPServer{}, fmt.Errorf("%w: %s is pending as event %s (%s)", ErrMCPServerChanged, rec.Slug, rec.EventID, strings.Join(rec.Command, " "))
	}
	if dec.Approve && !rec.AuthorTrusted && !dec.AcceptUntrusted {
		return MCPServer{}, fmt.Errorf("%w: %s by %s runs %q", ErrUntrustedMCPServer, rec.Slug, npubOf(rec.Author), strings.Join(rec.Command, " "))
	}
	rec.State, rec.Digest, rec.DecidedAt = MCPDenied, "", now()
	if dec.Approve {
		rec.State, rec.Digest = MCPApproved, rec.digest()
	}
	return rec, nil
}

// mcpServerEvent reads the kind 4200 ref names from the local relay.
func (d *Daemon) mcpServerEvent(ctx context.Context, ref string) (*events.MCPServer, error) {
	r, err := events.ParseRef(ref)
	if err != nil || r.ID == "" {
		return nil, fmt.Errorf("%w: server: want an nevent, note or hex id", ErrBadRequest)
	}
	evt, err := d.byID(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	if evt == nil || evt.Kind != events.KindMCPServer {
		return nil, fmt.Errorf("%w: no MCP server (kind 4200) %s on the local relay", ErrBadRequest, r.ID)
	}
	srv, err := events.ParseMCPServer(evt)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	return srv, nil
}

// MCPServers are the servers recorded on the agent, in the order added.
func (d *Daemon) MCPServers(agent string) ([]MCPServer, error) {
	b, err := os.ReadFile(d.mcpPath(agent))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("agentd: mcp servers: %w", err)
	}
	var list []MCPServer
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("agentd: mcp servers: %w", err)
	}
	return list, nil
}

// ListMCPServers is MCPServers by agent name or key.
func (d *Daemon) ListMCPServers(agent string) ([]MCPServer, error) {
	a, err := d.Lookup(agent)
	if err != nil {
		return nil, err
	}
	list, err := d.MCPServers(a.PubKey)
	if list == nil {
		list = []MCPServer{}
	}
	return list, err
}

func (d *Daemon) saveMCPServers(agent string, list []MCPServer) error {
	b, _ := json.MarshalIndent(list, "", "  ")
	if err := os.MkdirAll(filepath.Dir(d.mcpPath(agent)), 0o700); err != nil {
		return fmt.Errorf("agentd: mcp servers: %w", err)
	}
	if err := atomicfile.Write(d.mcpPath(agent), b, 0o600); err != nil {
		return fmt.Errorf("agentd: mcp servers: %w", err)
	}
	return nil
}

// mcpPath lists the agent's MCP servers.
func (d *Daemon) mcpPath(agent string) string {
	return filepath.Join(d.cfg.DataDir, "agents", agent, "mcp.json")
}

// notSlug is what a slug drops.
var notSlug = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// mcpSlug is a server name reduced to one safe path element.
func mcpSlug(name string) string {
	s := strings.Trim(notSlug.ReplaceAllString(name, "-"), ".-")
	if len(s) > 64 {
		s = s[:64]
	}
	if s == "" {
		s = "server"
	}
	return s
}
