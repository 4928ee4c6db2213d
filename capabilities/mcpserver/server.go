package mcpserver

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/agentnode/agentnode/capabilities/cap"
	"github.com/agentnode/agentnode/capabilities/registry"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configures the endpoint.
type Options struct {
	// Authorize decides whether a request bearing token may use agent's
	// endpoint (agent is a hex pubkey; token is httpauth.Token's, "" when
	// none was sent; serve answers with httpauth.Equal). A
	// nil Authorize refuses every agent endpoint: set AllowAll to open them.
	Authorize func(ctx context.Context, agent, token string) error
	// Name and Version name the server in MCP's initialize (defaults
	// "agentnode", "dev").
	Name, Version string
	// Logger receives SDK and handler logs (default slog.Default()).
	Logger *slog.Logger
}

// AllowAll is an Authorize that lets every caller use every agent endpoint.
func AllowAll(context.Context, string, string) error { return nil }

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
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	regServer := newRegistryServer(reg, opts)
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return regServer },
		&mcp.StreamableHTTPOptions{Logger: opts.Logger}))
	if host != nil {
		a := &agentEndpoint{host: host, opts: opts}
		mux.Handle("/mcp/agents/{agent}", a.handler())
	}
	return mux
}

func implementation(opts Options) *mcp.Implementation {
	return &mcp.Implementation{Name: opts.Name, Version: opts.Version}
}
