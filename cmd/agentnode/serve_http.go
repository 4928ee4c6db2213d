package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/agentnode/agentnode/blossom"
	"github.com/agentnode/agentnode/capabilities/mcpserver"
	"github.com/agentnode/agentnode/jsonrpc"
	"github.com/agentnode/agentnode/relay/policies"
)

// serveHTTP is the --config "http" section: how the node's HTTP server
// holds up against hostile clients (docs/SERVE.md). Zero or absent
// fields take the defaults (defaultHTTP); negative ones are refused.
type serveHTTP struct {
	// TrustedProxies (IPs or CIDRs): only a peer in it may name the client
	// with X-Forwarded-For / X-Real-IP. Default none.
	TrustedProxies []string `json:"trusted_proxies"`
	// MaxBodyBytes bounds every request body (413 beyond it).
	MaxBodyBytes int64 `json:"max_body_bytes"`
	// ReadTimeoutSeconds bounds reading a request, headers and body.
	ReadTimeoutSeconds int `json:"read_timeout_seconds"`
	// WriteTimeoutSeconds bounds a request from its headers to the end of
	// its answer, except on the endpoints that run agents and tools
	// (LongWriteTimeoutSeconds) and MCP event streams (none). Websockets
	// have none once upgraded.
	WriteTimeoutSeconds int `json:"write_timeout_seconds"`
	// LongWriteTimeoutSeconds is the write bound of /acp, /cap/agents/*,
	// POST /mcp* and POST /api/agents/*/chat.
	LongWriteTimeoutSeconds int `json:"long_write_timeout_seconds"`
	// IdleTimeoutSeconds closes a keep-alive connection idle this long.
	IdleTimeoutSeconds int `json:"idle_timeout_seconds"`
	// MCPSessionIdleSeconds closes an MCP session without requests this long.
	MCPSessionIdleSeconds int `json:"mcp_session_idle_seconds"`
	// MCPMaxSessions caps the live MCP sessions (503 beyond).
	MCPMaxSessions int `json:"mcp_max_sessions"`
	// MCPMaxSessionsPerIP caps the live MCP sessions opened from one
	// client address (429 beyond).
	MCPMaxSessionsPerIP int `json:"mcp_max_sessions_per_ip"`
	// MCPSessionUnusedSeconds closes an MCP session that made no call
	// after initialize once it is this old.
	MCPSessionUnusedSeconds int `json:"mcp_session_unused_seconds"`
	// JSONRPCMaxBatch bounds the entries of a JSON-RPC batch (/acp, CAP).
	JSONRPCMaxBatch int `json:"jsonrpc_max_batch"`
	// JSONRPCMaxResponseBytes bounds one JSON-RPC answer (/acp, CAP).
	JSONRPCMaxResponseBytes int `json:"jsonrpc_max_response_bytes"`
}

// defaultHTTP is the "http" section of a node without one.
var defaultHTTP = serveHTTP{
	MaxBodyBytes:            1 << 20,
	ReadTimeoutSeconds:      30,
	WriteTimeoutSeconds:     60,
	LongWriteTimeoutSeconds: 600,
	IdleTimeoutSeconds:      120,
	MCPSessionIdleSeconds:   int(mcpserver.DefaultSessionIdle / time.Second),
	MCPMaxSessions:          mcpserver.DefaultMaxSessions,
	MCPMaxSessionsPerIP:     mcpserver.DefaultMaxSessionsPerIP,
	MCPSessionUnusedSeconds: int(mcpserver.DefaultSessionUnused / time.Second),
	JSONRPCMaxBatch:         jsonrpc.DefaultMaxBatch,
	JSONRPCMaxResponseBytes: jsonrpc.DefaultMaxResponseBytes,
}

// httpSettings is the "http" section resolved: defaults filled in,
// proxies parsed.
type httpSettings struct {
	serveHTTP
	trusted []netip.Prefix
}

// parseHTTPSection decodes and checks the "http" section into f.HTTP.
func parseHTTPSection(top map[string]json.RawMessage, f *serveFile) error {
	raw, ok := top["http"]
	if !ok {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f.HTTP); err != nil {
		return fmt.Errorf(`"http": %v`, err)
	}
	_, err := f.HTTP.resolve()
	return err
}

// resolve checks h and fills its zero fields from defaultHTTP.
func (h serveHTTP) resolve() (httpSettings, error) {
	d := defaultHTTP
	for name, v := range map[string]*int{"read_timeout_seconds": &h.ReadTimeoutSeconds, "write_timeout_seconds": &h.WriteTimeoutSeconds,
		"long_write_timeout_seconds": &h.LongWriteTimeoutSeconds, "idle_timeout_seconds": &h.IdleTimeoutSeconds,
		"mcp_session_idle_seconds": &h.MCPSessionIdleSeconds, "mcp_max_sessions": &h.MCPMaxSessions,
		"mcp_max_sessions_per_ip": &h.MCPMaxSessionsPerIP, "mcp_session_unused_seconds": &h.MCPSessionUnusedSeconds,
		"jsonrpc_max_batch": &h.JSONRPCMaxBatch, "jsonrpc_max_response_bytes": &h.JSONRPCMaxResponseBytes} {
		if *v < 0 {
			return httpSettings{}, fmt.Errorf(`"http.%s" must be positive (0 or absent: the default)`, name)
		}
	}
	if h.MaxBodyBytes < 0 {
		return httpSettings{}, fmt.Errorf(`"http.max_body_bytes" must be positive (0 or absent: the default)`)
	}
	pick(&h.ReadTimeoutSeconds, d.ReadTimeoutSeconds)
	pick(&h.WriteTimeoutSeconds, d.WriteTimeoutSeconds)
	pick(&h.LongWriteTimeoutSeconds, d.LongWriteTimeoutSeconds)
	pick(&h.IdleTimeoutSeconds, d.IdleTimeoutSeconds)
	pick(&h.MCPSessionIdleSeconds, d.MCPSessionIdleSeconds)
	pick(&h.MCPMaxSessions, d.MCPMaxSessions)
	pick(&h.MCPMaxSessionsPerIP, d.MCPMaxSessionsPerIP)
	pick(&h.MCPSessionUnusedSeconds, d.MCPSessionUnusedSeconds)
	pick(&h.JSONRPCMaxBatch, d.JSONRPCMaxBatch)
	pick(&h.JSONRPCMaxResponseBytes, d.JSONRPCMaxResponseBytes)
	if h.MaxBodyBytes == 0 {
		h.MaxBodyBytes = d.MaxBodyBytes
	}
	trusted, err := policies.ParsePrefixes(h.TrustedProxies)
	if err != nil {
		return httpSettings{}, fmt.Errorf(`"http.trusted_proxies": %v (want IPs or CIDRs such as "10.0.0.0/8")`, err)
	}
	return httpSettings{serveHTTP: h, trusted: trusted}, nil
}

func pick(v *int, def int) {
	if *v == 0 {
		*v = def
	}
}

// httpConfig is the "http" section in force (checked by ParseFlags).
func (c *ServeCommand) httpConfig() httpSettings {
	var h serveHTTP
	if c.file != nil {
		h = c.file.HTTP
	}
	s, err := h.resolve()
	if err != nil { // parseHTTPSection refused it already: never here
		s, _ = serveHTTP{}.resolve()
	}
	return s
}

func seconds(n int) time.Duration { return time.Duration(n) * time.Second }

// jsonrpcOptions are the JSON-RPC servers' (/acp, CAP) limits.
func (h httpSettings) jsonrpcOptions(logger *slog.Logger) jsonrpc.Options {
	return jsonrpc.Options{Logger: logger, MaxRequestBytes: h.MaxBodyBytes,
		MaxBatch: h.JSONRPCMaxBatch, MaxResponseBytes: h.JSONRPCMaxResponseBytes}
}

// newServer is the node's http.Server around handler: every body
// bounded, the client named through trusted proxies only, timeouts set
// (long for agents and tools, none for MCP event streams; websockets
// drop theirs when hijacked: net/http clears the deadlines).
func (h httpSettings) newServer(handler http.Handler, logger *slog.Logger) *http.Server {
	handler = h.writeDeadlines(bodyBound(h.MaxBodyBytes, forwardedClient(h.trusted, handler)))
	return &http.Server{Handler: handler, ReadHeaderTimeout: min(10*time.Second, seconds(h.ReadTimeoutSeconds)),
		ReadTimeout: seconds(h.ReadTimeoutSeconds), WriteTimeout: seconds(h.WriteTimeoutSeconds),
		IdleTimeout: seconds(h.IdleTimeoutSeconds), ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
}

// writeDeadlines moves the write deadline of the long requests (see
// longWrite) away from the server's WriteTimeout.
func (h httpSettings) writeDeadlines(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch longWrite(r) {
		case writeStream:
			_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
		case writeLong:
			_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(seconds(h.LongWriteTimeoutSeconds)))
		case writeBlob: // a Blossom upload's body may take longer than ReadTimeout too
			rc := http.NewResponseController(w)
			_ = rc.SetReadDeadline(time.Now().Add(seconds(h.LongWriteTimeoutSeconds)))
			_ = rc.SetWriteDeadline(time.Now().Add(seconds(h.LongWriteTimeoutSeconds)))
		}
		next.ServeHTTP(w, r)
	})
}

// Write bounds of a request (longWrite).
const (
	writeNormal = iota // the server's WriteTimeout
	writeLong          // LongWriteTimeoutSeconds: runs agents or tools
	writeStream        // none: an MCP event stream, ended by the session's idle timeout
	writeBlob          // LongWriteTimeoutSeconds to read and to write: a Blossom blob (serve_blossom.go)
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
