package cluster

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/agentrpc"
	"github.com/agentnode/agentnode/agentd/consent"
	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/agentd/dm"
	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/agentd/tasks"
	"github.com/agentnode/agentnode/internal/lifecycle"
)

// Cluster is the part of serve that depends on whether agents are shared
// among instances: Single (one instance) or *Shared (--postgres). Serve
// calls every method in either case; the Configure methods leave a config
// as it is in Single.
type Cluster interface {
	// ConfigureConsent, ConfigureTasks, ConfigureDirectory,
	// ConfigureACP, ConfigureDM and ConfigureDaemon point a part's
	// config at the shared stores before it opens.
	ConfigureConsent(cfg *consent.Config)
	ConfigureTasks(cfg *tasks.Config)
	ConfigureDirectory(cfg *directory.Config)
	ConfigureACP(cfg *agentrpc.Config)
	ConfigureDM(ctx context.Context, cfg *dm.Config) error
	ConfigureDaemon(ctx context.Context, cfg *agentd.Config) error
	// OpenState makes the state runtime a cache of the shared op log
	// (before the daemon opens: ConfigureDaemon wraps it).
	OpenState(ctx context.Context, rt *state.Runtime, log *slog.Logger) error
	// Join hands the local parts over once they are open: every
	// installed agent gets its lease row.
	Join(ctx context.Context, l Local) error
	// Parts run once the DMs are ready (a takeover catches up on them).
	Parts() []lifecycle.Part
	// Runs reports whether an installed agent runs on this instance.
	Runs(agent string) bool
	// Changed is ready when the agents running here changed; nil (never
	// ready) in Single.
	Changed() <-chan struct{}
	// Held is the number of leases this instance holds.
	Held() int
	// Forward wraps h: a request for an agent another instance runs
	// (agentOf names it) goes to its holder.
	Forward(h http.Handler, agentOf func(*http.Request) string) http.Handler
	// Mount adds the routes only a cluster needs: the agents' API read
	// fresh, its writes and per-agent MCP forwarded.
	Mount(mux *http.ServeMux, agents, mcp http.Handler)
	// Chat runs one chat message of an installed agent that runs
	// elsewhere on its holder.
	Chat(ctx context.Context, agent, conversation, text string) (string, error)
	// Close hands the leases back and closes the database.
	Close(ctx context.Context) error
}

// Local are the parts of this instance the cluster drives.
type Local struct {
	Agents Agents      // the daemon: *agentd.Daemon
	DMs    *dm.Service // catches up on a taken-over agent's DMs
	// Reload brings this instance's copies up to date after a change made
	// by another instance (an agentpg topic).
	Reload Reloads
}

// Agents are the installed agents as this instance knows them
// (*agentd.Daemon).
type Agents interface {
	Lookup(ref string) (agentd.Agent, error)
	List() []agentd.Agent
	Reload(ctx context.Context) error
}

// Reloads are what to do on each kind of change made elsewhere; nil
// fields are skipped. The cluster reloads the installed agents itself.
type Reloads struct {
	Revoked       func(context.Context) error // consent revocations
	Tasks         func(context.Context) error // a task added or changed
	Consent       func(context.Context) error // an approval decided
	Registrations func(context.Context) error // directory registrations
}

// ErrUnavailable: the agent runs on no instance right now (being taken
// over), or on one that does not answer; retry.
var ErrUnavailable = errors.New("agent not running on any reachable instance; retry")

// Single is the Cluster of a node alone: every installed agent runs here.
type Single struct{}

var _ Cluster = Single{}

func (Single) ConfigureConsent(*consent.Config)                      {}
func (Single) ConfigureTasks(*tasks.Config)                          {}
func (Single) ConfigureDirectory(*directory.Config)                  {}
func (Single) ConfigureACP(*agentrpc.Config)                         {}
func (Single) ConfigureDM(context.Context, *dm.Config) error         { return nil }
func (Single) ConfigureDaemon(context.Context, *agentd.Config) error { return nil }
func (Single) OpenState(context.Context, *state.Runtime, *slog.Logger) error {
	return nil
}
func (Single) Join(context.Context, Local) error { return nil }
func (Single) Parts() []lifecycle.Part           { return nil }
func (Single) Runs(string) bool                  { return true }
func (Single) Changed() <-chan struct{}          { return nil }
func (Single) Held() int                         { return 0 }
func (Single) Forward(h http.Handler, _ func(*http.Request) string) http.Handler {
	return h
}
func (Single) Mount(*http.ServeMux, http.Handler, http.Handler) {}
func (Single) Chat(context.Context, string, string, string) (string, error) {
	return "", ErrUnavailable
}
func (Single) Close(context.Context) error { return nil }

// forwardedKey marks the context of a request another instance forwarded.
type forwardedKey struct{}

// isForwarded reports whether ctx is a forwarded request's.
func isForwarded(ctx context.Context) bool {
	f, _ := ctx.Value(forwardedKey{}).(bool)
	return f
}
