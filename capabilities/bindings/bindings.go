package bindings

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Config says what the bindings may reach and how.
type Config struct {
	// AllowPrivate lets http_get/http_post reach loopback, private,
	// link-local, CGNAT and other non-public addresses (a development node).
	AllowPrivate bool
	// AllowHosts are host names (exact, case-insensitive), IP addresses or
	// CIDR prefixes that HTTP bindings may reach even when they resolve to
	// a non-public address.
	AllowHosts []string
	// MCP maps an mcp_service binding's service_uri to the server to run
	// or reach. A service_uri that is not here is used as it is when it is
	// an http(s) URL (through the SSRF guard), else NOT_FOUND.
	MCP map[string]MCPEndpoint
	// HTTPTimeout bounds one HTTP binding call (default 30s).
	HTTPTimeout time.Duration
	// MaxResponseBytes caps an HTTP binding's response body (default 1 MiB).
	MaxResponseBytes int64
	// A2A carries nuwa_a2a calls; nil means nuwa_a2a is unavailable.
	A2A A2ACaller
	// Nostr reaches an mcp_service whose service_uri is "nostr:<npub>" or
	// "nostr:<nprofile>" (a ContextVM server, MCP over Nostr): it returns
	// the transport of a new session (agentd/contextvm.ClientTransport).
	// nil: such URIs are NOT_FOUND unless the MCP map names them.
	Nostr func(serviceURI string) (mcp.Transport, error)
	// OnCall are hooks run after every call through CallBinding, in order,
	// with the call and its outcome (serve counts them for /metrics). They
	// decorate the registry by composition: there is no wrapper around the
	// Runner to hide a method of it. They must be quick and must not block.
	OnCall []func(ctx context.Context, c Call, err error)
	// Resolve, when set, is asked first for an mcp_service's endpoint
	// (ok false: not one it knows). agentd uses it for the NIP-AD
	// kind-4200 servers an owner approved, run under a Sandbox.
	Resolve func(serviceURI string) (ep MCPEndpoint, ok bool)
}

// Defaults for zero Config fields.
const (
	DefaultHTTPTimeout      = 30 * time.Second
	DefaultMaxResponseBytes = 1 << 20
)

// MCPEndpoint is one MCP server: a stdio Command (argv; the child gets the
// node's PATH and HOME plus Env) or a streamable HTTP URL.
type MCPEndpoint struct {
	Command []string
	Env     []string // KEY=value pairs added to the child's environment
	URL     string
	// Sandbox, when set, runs Command sandboxed (sandbox.go): no
	// inherited environment but PATH and LANG, its own dir and process
	// group, resource limits, bounded output.
	Sandbox *Sandbox

	guarded bool          // a URL from a package, not the operator: dialled through the SSRF guard
	nostr   mcp.Transport // a ContextVM server (Config.Nostr)
}

// A2ACaller calls a JSON-RPC method on another agent, as fromAgent (hex
// pubkey of a local agent) to target (hex pubkey). agentd/nostrrpc.Client
// implements it over kind 25910. Failures the caller should see as CAP
// codes are *capabilities.Error. Safe for concurrent use.
type A2ACaller interface {
	CallAgent(ctx context.Context, fromAgent, target, method string, params json.RawMessage) (json.RawMessage, error)
}

// Call is one tool call through a binding.
type Call struct {
	Agent   string // the calling agent's pubkey (hex)
	Tool    string // the tool's function name, for messages
	Binding acp.Binding
	Args    json.RawMessage // the tool call's JSON arguments (an object)
}

// Runner executes binding calls. It is safe for concurrent use; MCP
// sessions are started on first use, shared per service_uri, restarted
// after they die and ended by Close.
type Runner struct {
	cfg  Config
	http *http.Client

	mu     sync.Mutex
	mcp    map[string]*mcpSession // live sessions by service_uri
	starts map[string]*sync.Mutex // serialises starting each service_uri
	closed bool
	wg     sync.WaitGroup // one watcher per live MCP session

	schemas schemaCache // MCP tools' outputSchema (MCPOutputSchema)
}

// New returns a Runner for cfg. It starts nothing.
func New(cfg Config) *Runner {
	if cfg.HTTPTimeout <= 0 {
		cfg.HTTPTimeout = DefaultHTTPTimeout
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	r := &Runner{cfg: cfg, mcp: map[string]*mcpSession{}, starts: map[string]*sync.Mutex{}}
	r.http = newHTTPClient(newGuard(cfg.AllowPrivate, cfg.AllowHosts))
	return r
}

// Call runs c through its binding and returns the JSON result. Errors are
// *capabilities.Error: INVALID_INPUT (bad arguments or binding),
// PERMISSION_DENIED (a refused address), NOT_FOUND (unknown service or
// method), TIMEOUT, EXECUTION_FAILED.
func (r *Runner) Call(ctx context.Context, c Call) (json.RawMessage, error) {
	var (
		out json.RawMessage
		err error
	)
	switch c.Binding.Type {
	case acp.BindHTTPGet:
		out, err = r.httpGet(ctx, c)
	case acp.BindHTTPPost:
		out, err = r.httpPost(ctx, c)
	case acp.BindMCPService:
		out, err = r.callMCP(ctx, c)
	case acp.BindNuwaA2A:
		out, err = r.callA2A(ctx, c)
	default:
		return nil, capabilities.Errorf(capabilities.CodeInvalidInput, "tool %s: unknown binding type %q", c.Tool, c.Binding.Type)
	}
	if err != nil {
		return nil, coded(err)
	}
	return out, nil
}

// CallBinding runs one tool call through a package's binding, as agent
// (64-hex), and runs the OnCall hooks: the Runner is the daemon's
// agentd.BindingCaller as it is. Errors are as Call's.
func (r *Runner) CallBinding(ctx context.Context, agent, tool string, b acp.Binding, args json.RawMessage) (json.RawMessage, error) {
	c := Call{Agent: agent, Tool: tool, Binding: b, Args: args}
	out, err := r.Call(ctx, c)
	for _, hook := range r.cfg.OnCall {
		hook(ctx, c, err)
	}
	return out, err
}

// OutputSchema is the output schema of b's tool: the backing MCP tool's
// outputSchema for an mcp_service binding (MCPOutputSchema), nil for the
// other types.
func (r *Runner) OutputSchema(ctx context.Context, b acp.Binding) (json.RawMessage, error) {
	if b.Type != acp.BindMCPService {
		return nil, nil
	}
	return r.MCPOutputSchema(ctx, b.ServiceURI, b.MCPAction)
}

// Close ends every MCP session (and stops the processes it started) and
// waits for their watchers. Calls after Close fail.
func (r *Runner) Close() error {
	r.mu.Lock()
	r.closed = true
	sessions := r.mcp
	r.mcp = map[string]*mcpSession{}
	r.mu.Unlock()
	var errs []error
	for _, s := range sessions {
		errs = append(errs, s.close())
	}
	r.wg.Wait()
	r.http.CloseIdleConnections()
	return errors.Join(errs...)
}

// errRunnerClosed is a call after Close.
var errRunnerClosed = capabilities.Errorf(capabilities.CodeExecutionFailed, "the binding runner is closed")

// coded makes sure err is a *capabilities.Error.
func coded(err error) error {
	var ce *capabilities.Error
	if errors.As(err, &ce) {
		return err
	}
	code := capabilities.CodeOf(err)
	if code == capabilities.CodeTimeout {
		return &capabilities.Error{Code: code, Message: "the call timed out", Err: err}
	}
	return &capabilities.Error{Code: code, Message: "the call failed", Err: err}
}
