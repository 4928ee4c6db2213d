package mcpserver

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/agentnode/agentnode/capabilities/cap"
	"github.com/agentnode/agentnode/capabilities/registry"
	"github.com/agentnode/agentnode/internal/httplimit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configures the endpoint.
type Options struct {
	// Authorize decides whether a request bearing token may use agent's
	// endpoint (agent is a hex pubkey; token is httpauth.Token's, "" when
	// none was sent; serve answers with httpauth.Equal). A
	// nil Authorize refuses every agent endpoint.
	Authorize func(ctx context.Context, agent, token string) error
	// Name and Version name the server in MCP's initialize (defaults
	// "agentnode", "dev").
	Name, Version string
	// Logger receives SDK and handler logs (default slog.Default()).
	Logger *slog.Logger
	// MaxBodyBytes bounds a request body (default DefaultMaxBodyBytes);
	// a larger one is answered 413 before the SDK reads it.
	MaxBodyBytes int64
	// SessionIdle closes a session that has had no request for this long
	// (default DefaultSessionIdle; the SDK's SessionTimeout). A client
	// keeping only the GET event stream open must ping to stay live.
	SessionIdle time.Duration
	// MaxSessions caps the live sessions of /mcp, and apart from them
	// those of the agent endpoints together (default DefaultMaxSessions),
	// so that anonymous clients cannot crowd out the token's holders; a
	// request that would open one more is answered 503 with Retry-After
	// (on agent endpoints, after the token check).
	MaxSessions int
	// MaxSessionsPerIP caps the live sessions opened from one client
	// address, per endpoint kind as MaxSessions (default
	// DefaultMaxSessionsPerIP); one more is answered 429 with Retry-After.
	MaxSessionsPerIP int
	// SessionUnused closes a session that made no call after initialize
	// once it is this old (default DefaultSessionUnused), so that a flood
	// of bare initialize frees its places long before SessionIdle.
	SessionUnused time.Duration
	// ClientIP is the address a request comes from, for MaxSessionsPerIP
	// (default RemoteIP; serve passes relay/policies.ClientIP with the
	// trusted proxies).
	ClientIP func(*http.Request) string

	now func() time.Time // the gates' clock (tests)
}

// Defaults of Options.
const (
	DefaultMaxBodyBytes = 1 << 20
	DefaultSessionIdle  = 30 * time.Minute
	DefaultMaxSessions  = 1000
	// DefaultMaxSessionsPerIP leaves room for a NAT full of clients
	// while no single address can take more than a sixteenth of the
	// default cap.
	DefaultMaxSessionsPerIP = 64
	DefaultSessionUnused    = time.Minute
)

// ErrUnauthorized is what Authorize returns to refuse a caller.
var ErrUnauthorized = errors.New("mcpserver: unauthorized")

// New returns the MCP handler for /mcp (registry tools; nil reg serves no
// tools) and /mcp/agents/{agent} (agent capabilities through host; nil host
// answers 404). It starts nothing.
func New(reg *registry.Registry, host *cap.Host, opts Options) http.Handler {
	if opts.Name == "" {
		opts.Name = "agentnode"
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	opts = withDefaults(opts)
	regServer := newRegistryServer(reg, opts)
	regGate := newSessionGate(opts)
	regGate.share(regServer)
	mux := http.NewServeMux()
	mux.Handle("/mcp", regGate.admit(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return regServer }, streamOptions(opts))))
	if host != nil {
		a := &agentEndpoint{host: host, opts: opts, gate: newSessionGate(opts)}
		mux.Handle("/mcp/agents/{agent}", a.handler())
	}
	return httplimit.Buffer(opts.MaxBodyBytes, mux)
}

func withDefaults(opts Options) Options {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.SessionIdle <= 0 {
		opts.SessionIdle = DefaultSessionIdle
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.MaxSessionsPerIP <= 0 {
		opts.MaxSessionsPerIP = DefaultMaxSessionsPerIP
	}
	if opts.SessionUnused <= 0 {
		opts.SessionUnused = DefaultSessionUnused
	}
	if opts.ClientIP == nil {
		opts.ClientIP = RemoteIP
	}
	if opts.now == nil {
		opts.now = time.Now
	}
	return opts
}

// streamOptions are the SDK's options of every endpoint's sessions.
func streamOptions(opts Options) *mcp.StreamableHTTPOptions {
	return &mcp.StreamableHTTPOptions{Logger: opts.Logger, SessionTimeout: opts.SessionIdle}
}

func implementation(opts Options) *mcp.Implementation {
	return &mcp.Implementation{Name: opts.Name, Version: opts.Version}
}
