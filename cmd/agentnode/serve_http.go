package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/dm"
	"github.com/agentnode/agentnode/blossom"
	"github.com/agentnode/agentnode/capabilities/bindings"
	"github.com/agentnode/agentnode/internal/metrics"
	"github.com/agentnode/agentnode/internal/redact"
	"github.com/agentnode/agentnode/jsonrpc"
	"github.com/agentnode/agentnode/relay/policies"
	"github.com/agentnode/agentnode/web"
)

// serve's HTTP side: the server's limits and timeouts (the "http"
// section), the web pages ("web"), and /metrics.

// serveHTTP is the --config "http" section: how the node's HTTP server
// holds up against hostile clients (docs/SERVE.md). Zero or absent keys
// take their default tag (the MCP and JSON-RPC ones are mcpserver's and
// jsonrpc's Default*, TestServeConfig_httpSection); negative ones are
// refused.
type serveHTTP struct {
	// TrustedProxies (IPs or CIDRs): only a peer in it may name the client
	// with X-Forwarded-For / X-Real-IP. Default none.
	TrustedProxies []string `json:"trusted_proxies"`
	// MaxBodyBytes bounds every request body (413 beyond it).
	MaxBodyBytes int64 `json:"max_body_bytes" min:"0" default:"1048576"`
	// ReadTimeout bounds reading a request, headers and body.
	ReadTimeout time.Duration `json:"read_timeout_seconds" unit:"s" min:"0" default:"30"`
	// WriteTimeout bounds a request from its headers to the end of its
	// answer, except on the endpoints that run agents and tools
	// (LongWriteTimeout) and MCP event streams (none). Websockets have
	// none once upgraded.
	WriteTimeout time.Duration `json:"write_timeout_seconds" unit:"s" min:"0" default:"60"`
	// LongWriteTimeout is the write bound of /acp, /cap/agents/*,
	// POST /mcp* and POST /api/agents/*/chat.
	LongWriteTimeout time.Duration `json:"long_write_timeout_seconds" unit:"s" min:"0" default:"600"`
	// IdleTimeout closes a keep-alive connection idle this long.
	IdleTimeout time.Duration `json:"idle_timeout_seconds" unit:"s" min:"0" default:"120"`
	// MCPSessionIdle closes an MCP session without requests this long.
	MCPSessionIdle time.Duration `json:"mcp_session_idle_seconds" unit:"s" min:"0" default:"1800"`
	// MCPMaxSessions caps the live MCP sessions (503 beyond).
	MCPMaxSessions int `json:"mcp_max_sessions" min:"0" default:"1000"`
	// MCPMaxSessionsPerIP caps the live MCP sessions opened from one
	// client address (429 beyond).
	MCPMaxSessionsPerIP int `json:"mcp_max_sessions_per_ip" min:"0" default:"64"`
	// MCPSessionUnused closes an MCP session that made no call after
	// initialize once it is this old.
	MCPSessionUnused time.Duration `json:"mcp_session_unused_seconds" unit:"s" min:"0" default:"60"`
	// JSONRPCMaxBatch bounds the entries of a JSON-RPC batch (/acp, CAP).
	JSONRPCMaxBatch int `json:"jsonrpc_max_batch" min:"0" default:"100"`
	// JSONRPCMaxResponseBytes bounds one JSON-RPC answer (/acp, CAP).
	JSONRPCMaxResponseBytes int `json:"jsonrpc_max_response_bytes" min:"0" default:"4194304"`

	trusted []netip.Prefix // TrustedProxies parsed (check)
}

// check parses the trusted proxies.
func (h *serveHTTP) check(string) (err error) {
	if h.trusted, err = policies.ParsePrefixes(h.TrustedProxies); err != nil {
		return fmt.Errorf(`"http.trusted_proxies": %v (want IPs or CIDRs such as "10.0.0.0/8")`, err)
	}
	return nil
}

// httpConfig is the "http" section in force (checked by ParseFlags).
func (c *ServeCommand) httpConfig() serveHTTP { return c.conf().HTTP }

// jsonrpcOptions are the JSON-RPC servers' (/acp, CAP) limits.
func (h serveHTTP) jsonrpcOptions(logger *slog.Logger) jsonrpc.Options {
	return jsonrpc.Options{Logger: logger, MaxRequestBytes: h.MaxBodyBytes,
		MaxBatch: h.JSONRPCMaxBatch, MaxResponseBytes: h.JSONRPCMaxResponseBytes}
}

// newServer is the node's http.Server around handler: every body
// bounded, the client named through trusted proxies only, timeouts set
// (long for agents and tools, none for MCP event streams; websockets
// drop theirs when hijacked: net/http clears the deadlines).
func (h serveHTTP) newServer(handler http.Handler, logger *slog.Logger) *http.Server {
	handler = h.writeDeadlines(bodyBound(h.MaxBodyBytes, forwardedClient(h.trusted, handler)))
	return &http.Server{Handler: handler, ReadHeaderTimeout: min(10*time.Second, h.ReadTimeout),
		ReadTimeout: h.ReadTimeout, WriteTimeout: h.WriteTimeout,
		IdleTimeout: h.IdleTimeout, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
}

// writeDeadlines moves the write deadline of the long requests (see
// longWrite) away from the server's WriteTimeout.
func (h serveHTTP) writeDeadlines(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch longWrite(r) {
		case writeStream:
			_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
		case writeLong:
			_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(h.LongWriteTimeout))
		case writeBlob: // a Blossom upload's body may take longer than ReadTimeout too
			rc := http.NewResponseController(w)
			_ = rc.SetReadDeadline(time.Now().Add(h.LongWriteTimeout))
			_ = rc.SetWriteDeadline(time.Now().Add(h.LongWriteTimeout))
		}
		next.ServeHTTP(w, r)
	})
}

// Write bounds of a request (longWrite).
const (
	writeNormal = iota // the server's WriteTimeout
	writeLong          // LongWriteTimeoutSeconds: runs agents or tools
	writeStream        // none: an MCP event stream, ended by the session's idle timeout
	writeBlob          // LongWriteTimeoutSeconds to read and to write: a Blossom blob (serve_relay.go)
)

// longWrite classifies r by path: MCP GETs are event streams; /acp, CAP,
// the other MCP requests and agent chat run agents or tools.
func longWrite(r *http.Request) int {
	p := r.URL.Path
	switch {
	case blossom.IsBlossom(r):
		return writeBlob
	case p == "/mcp" || strings.HasPrefix(p, "/mcp/"):
		if r.Method == http.MethodGet {
			return writeStream
		}
		return writeLong
	case p == pathACP, strings.HasPrefix(p, "/cap/agents/"):
		return writeLong
	case r.Method == http.MethodPost && strings.HasPrefix(p, "/api/agents/") && strings.HasSuffix(p, "/chat"):
		return writeLong
	}
	return writeNormal
}

// forwardedClient serves next with the request's client resolved once
// (policies.ClientIP): from a trusted proxy, RemoteAddr becomes the
// forwarded client; X-Forwarded-For and X-Real-IP are removed either
// way, so nothing downstream (the relay's rate limit, khatru.GetIP, logs)
// can believe a forged one.
func forwardedClient(trusted []netip.Prefix, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Forwarded-For") == "" && r.Header.Get("X-Real-IP") == "" {
			next.ServeHTTP(w, r)
			return
		}
		ip := policies.ClientIP(r, trusted)
		r = r.Clone(r.Context())
		r.Header.Del("X-Forwarded-For")
		r.Header.Del("X-Real-IP")
		if ip != "" {
			r.RemoteAddr = net.JoinHostPort(ip, "0")
		}
		next.ServeHTTP(w, r)
	})
}

// mountWeb registers the web page for people (docs/WEB.md) on mux: the
// directory at / (websocket upgrades and NIP-11 go on to the relay), the
// agent, definition, capability and search pages, the owner console
// behind token, and /metrics. It also
// sets the NIP-11 operator fields of the "node" section.
func (c *ServeCommand) mountWeb(mux *http.ServeMux, token string, logger *slog.Logger) {
	c.relay.SetOperator(c.nodeConfig().operator())
	wc := c.conf().Web
	cfg := web.Config{Store: c.relay, Directory: c.rt.dir, Lessons: c.daemon, Registry: c.rt.reg, Token: token,
		TokenFile: agentd.TokenPath(c.Config.DataDir), Name: c.nodeConfig().Name, Version: Version, Logger: logger.With("component", "web"),
		MaxRenders: wc.MaxRenders, RenderWait: wc.RenderWait}
	cfg.Files = c.webFiles    // serve_relay.go
	if c.acp.consent != nil { // never a typed nil in the interface
		cfg.Consent = c.acp.consent
	}
	if c.daemon != nil {
		cfg.Installed = c.daemon
		cfg.MCP = c.daemon // kind-4200 servers in the console
	}
	site := web.New(cfg)
	site.Mount(mux, c.relay)
	mux.Handle("GET /metrics", c.rt.metrics.Handler())
}

// serveWeb is the --config "web" section (docs/WEB.md#bounds): how many
// pages are built at once and how long a request waits for a turn before
// it gets 503. Zero: the web package's defaults (4, 2000 ms).
type serveWeb struct {
	MaxRenders int           `json:"max_renders" min:"0"`
	RenderWait time.Duration `json:"render_wait_ms" unit:"ms" min:"0"`
}

// openMetrics builds the /metrics registry (docs/SERVE.md#metrics) over
// the relay and the peer syncer, and counts every stored event.
func (c *ServeCommand) openMetrics() {
	src := metrics.Sources{Relay: func() metrics.RelayStats {
		s := c.relay.Stats()
		return metrics.RelayStats{Connections: s.Connections, Subscriptions: s.Subscriptions, SlowConsumers: s.SlowConsumers,
			RefusedConns: s.RefusedConns, Shed: s.Shed,
			Refused: c.relay.Refusals(), Batches: s.Batches, BatchOps: s.BatchOps, CommitSeconds: s.CommitTime.Seconds()}
	}, Node: c.nodeStats, Version: Version}
	if c.peers != nil {
		src.Peers = c.peerStats
	}
	src.Strangers = c.strangerStats // serve_agents.go
	c.rt.metrics = metrics.New(src)
	c.onClose(unhooked(c.relay.OnStored(c.rt.metrics.Stored)))
	c.relay.OnLatency(c.rt.metrics.Published, c.rt.metrics.EOSE)
}

// nodeStats are the node's gauges: agents, leases, queues. Parts not open
// yet (a scrape during the start) count as none.
func (c *ServeCommand) nodeStats() metrics.NodeStats {
	var s metrics.NodeStats
	if c.daemon == nil {
		return s
	}
	s.Agents = len(c.daemon.List())
	s.Running = len(c.agentKeys()) // --postgres: the ones running here
	s.Leases = c.cluster.Held()
	s.Queues = map[string]int{"tasks": c.activeTasks()}
	return s
}

// activeTasks is the number of ACP tasks assigned and not finished, on
// every agent of the node (bounded by a short timeout: /metrics is public).
func (c *ServeCommand) activeTasks() int {
	if c.acp == nil || c.acp.tasks == nil {
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	active, err := c.acp.tasks.Active(ctx)
	if err != nil {
		return 0
	}
	n := 0
	for _, k := range active {
		n += k
	}
	return n
}

// timedRPC is serveRPC (a kind-25910 call) observed as an agent call.
func (c *ServeCommand) timedRPC(ctx context.Context, agent, from, method string, params json.RawMessage) (any, error) {
	start := time.Now()
	out, err := c.serveRPC(ctx, agent, from, method, params)
	c.rt.metrics.AgentCall("a2a", err, time.Since(start))
	return out, err
}

// timedDM is respondDM (a NIP-17 DM) observed as an agent call; a DM the
// agent does not answer (dm.ErrNoAnswer) is no call.
func (c *ServeCommand) timedDM(ctx context.Context, agent, from, text string) (string, error) {
	start := time.Now()
	answer, err := c.respondDM(ctx, agent, from, text)
	if !errors.Is(err, dm.ErrNoAnswer) {
		c.rt.metrics.AgentCall("dm", err, time.Since(start))
	}
	return answer, err
}

// peerStats are the peer syncer's figures per peer.
func (c *ServeCommand) peerStats() []metrics.PeerStats {
	var out []metrics.PeerStats
	for _, p := range c.peers.Status() {
		out = append(out, metrics.PeerStats{URL: redact.URL(p.URL), // /metrics is public: no credentials in labels
			Connected: p.Connected, LastSeen: p.LastSeen,
			Received: p.Received, Stored: p.Stored, Refused: p.Refused, Pushed: p.Pushed, PushRefused: p.PushRefused})
	}
	return out
}

// countToolCall counts an agent's tool call through a capability binding
// (agentnode_agent_tool_calls_total): a bindings.Config.OnCall hook, so
// the runner serves the daemon as it is, schemas included
// (TestServe_MCPBindingOutputSchema).
func (c *ServeCommand) countToolCall(_ context.Context, call bindings.Call, err error) {
	c.rt.metrics.ToolCall(call.Binding.Type, err)
}
