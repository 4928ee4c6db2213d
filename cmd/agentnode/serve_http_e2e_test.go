package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/fiatjaf/khatru"
	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/capabilities/mcpserver"
	"github.com/agentnode/agentnode/internal/relayclient"
	"github.com/agentnode/agentnode/jsonrpc"
)

// The served node against hostile HTTP clients (docs/SERVE.md, "http"):
// one node with small limits, each finding's client-visible answer, and
// the node still serving afterwards.

const hostileConfig = `{"http": {"max_body_bytes": 65536, "jsonrpc_max_batch": 10, "mcp_max_sessions": 2, "read_timeout_seconds": 1}}`

func TestServeHTTP_hostileClients(t *testing.T) {
	n := startEndpointNode(t, "Hostile", "--config", writeServeConfig(t, hostileConfig))
	pk := n.agentPK()
	t.Run("one token check", func(t *testing.T) { checkAuth(t, n, pk) })
	t.Run("bodies", func(t *testing.T) { checkBodies(t, n, pk) })
	t.Run("batches", func(t *testing.T) { checkBatches(t, n, pk) })
	t.Run("mcp sessions", func(t *testing.T) { checkMCPSessions(t, n) })
	t.Run("timeouts spare websockets", func(t *testing.T) { checkTimeouts(t, n) })
	assertHealthy(t, n)
}

// assertHealthy: the node answers HTTP and JSON-RPC.
func assertHealthy(t *testing.T, n endpointNode) {
	t.Helper()
	resp, err := http.Get(n.url("/healthz"))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz after: %v %v", resp, err)
	}
	resp.Body.Close()
	if r := rpcPost(t, n.url(pathACP), n.token, "ping", nil); r.Error != nil {
		t.Fatalf("ping after: %+v", r.Error)
	}
}

// send does one request and returns its status and headers.
func send(t *testing.T, method, url, token string, body io.Reader) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, resp.Header, string(b)
}

// checkAuth: every endpoint acting for the agents refuses a missing or
// wrong token with 401 and the challenge, and takes the scheme in any case.
func checkAuth(t *testing.T, n endpointNode, pk string) {
	ping := rpcRequest(1, "ping", nil)
	for _, ep := range []struct{ method, path, body string }{
		{"POST", pathACP, ping},
		{"POST", "/cap/agents/" + pk, ping},
		{"POST", "/mcp/agents/" + pk, initializeMCP},
		{"POST", "/api/agents", `{}`},
		{"GET", "/api/consent", ""},
	} {
		for _, tok := range []string{"", "Bearer wrong", "Bearer " + n.token[:10], "Basic " + n.token} {
			status, h, _ := send(t, ep.method, n.url(ep.path), tok, strings.NewReader(ep.body))
			if status != http.StatusUnauthorized || h.Get("WWW-Authenticate") != `Bearer realm="agentnode"` {
				t.Errorf("%s %s with %q: %d %q, want 401 with the challenge", ep.method, ep.path, tok, status, h.Get("WWW-Authenticate"))
			}
		}
		status, _, body := send(t, ep.method, n.url(ep.path), "bEaReR "+n.token, strings.NewReader(ep.body))
		if status == http.StatusUnauthorized {
			t.Errorf("%s %s with the token (scheme in mixed case): 401 %s", ep.method, ep.path, body)
		}
	}
}

const initializeMCP = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// checkBodies: a body over max_body_bytes is 413 everywhere, the
// unauthenticated /mcp included, declared or chunked.
func checkBodies(t *testing.T, n endpointNode, pk string) {
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("a", 128<<10) + `"}}`
	bearer := "Bearer " + n.token
	for _, ep := range []struct{ path, token string }{
		{"/mcp", ""}, {"/mcp/agents/" + pk, bearer}, {pathACP, bearer}, {"/cap/agents/" + pk, bearer},
		{"/api/agents", bearer}, {"/api/consent/revoked", bearer},
	} {
		for name, body := range map[string]func() io.Reader{
			"declared": func() io.Reader { return strings.NewReader(big) },
			"chunked":  func() io.Reader { return io.MultiReader(strings.NewReader(big)) },
		} {
			status, _, text := send(t, http.MethodPost, n.url(ep.path), ep.token, body())
			if status != http.StatusRequestEntityTooLarge {
				t.Errorf("POST %s (%s, 128 KiB): %d %.120s, want 413", ep.path, name, status, text)
			}
		}
	}
}

// checkBatches: a batch over jsonrpc_max_batch runs nothing and is one
// -32600 error naming the limit, on /acp and on CAP.
func checkBatches(t *testing.T, n endpointNode, pk string) {
	batch := func(k int) string {
		parts := make([]string, k)
		for i := range parts {
			parts[i] = rpcRequest(i+1, "ping", nil)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	ones := "[" + strings.TrimSuffix(strings.Repeat("1,", 30<<10), ",") + "]" // 60 KiB of 1s
	for _, path := range []string{pathACP, "/cap/agents/" + pk} {
		for _, body := range []string{batch(11), ones} {
			status, raw := postJSON(t, n.url(path), n.token, body)
			r := decodeReply(t, raw)
			if status != http.StatusOK || r.Error == nil || r.Error.Code != -32600 || !strings.Contains(r.Error.Message, "at most 10 entries") {
				t.Errorf("%s, batch of %.20s: %d %.200s; want one -32600 naming the limit", path, body, status, raw)
			}
			if len(raw) > 200 {
				t.Errorf("%s: %d bytes of answer, want one short error", path, len(raw))
			}
		}
		status, raw := postJSON(t, n.url(path), n.token, batch(10))
		var all []rpcReply
		if err := json.Unmarshal(raw, &all); status != http.StatusOK || err != nil || len(all) != 10 {
			t.Errorf("%s, batch of 10: %d %.200s; want 10 answers", path, status, raw)
		}
	}
}

// checkMCPSessions: mcp_max_sessions 2: a third session is 503 with
// Retry-After; DELETE frees a place.
func checkMCPSessions(t *testing.T, n endpointNode) {
	var ids []string
	for range 2 {
		status, h, body := send(t, http.MethodPost, n.url("/mcp"), "", strings.NewReader(initializeMCP))
		if status != http.StatusOK || h.Get("Mcp-Session-Id") == "" {
			t.Fatalf("initialize: %d %.200s", status, body)
		}
		ids = append(ids, h.Get("Mcp-Session-Id"))
	}
	status, h, _ := send(t, http.MethodPost, n.url("/mcp"), "", strings.NewReader(initializeMCP))
	if status != http.StatusServiceUnavailable || h.Get("Retry-After") == "" {
		t.Fatalf("a third session: %d (Retry-After %q), want 503 with Retry-After", status, h.Get("Retry-After"))
	}
	for _, id := range ids {
		req, _ := http.NewRequest(http.MethodDelete, n.url("/mcp"), nil)
		req.Header.Set("Mcp-Session-Id", id)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusNoContent {
			t.Fatalf("DELETE: %v %v", resp, err)
		}
		resp.Body.Close()
	}
	if status, _, body := send(t, http.MethodPost, n.url("/mcp"), "", strings.NewReader(initializeMCP)); status != http.StatusOK {
		t.Fatalf("initialize after DELETE: %d %.200s", status, body)
	}
}

// checkTimeouts: with read_timeout_seconds 1, a client that announces a
// body and never sends it is cut; websockets opened before it (the relay's
// and /acp's) still answer afterwards: net/http clears a hijacked
// connection's deadlines.
func checkTimeouts(t *testing.T, n endpointNode) {
	ctx, cancel := context.WithTimeout(context.Background(), e2eWait)
	defer cancel()
	rel, err := relayclient.Dial(ctx, n.wsURL(""), relayclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rel.Close()
	acp, _, err := dialWS(t, n.wsURL(pathACP), n.token)
	if err != nil {
		t.Fatal(err)
	}

	slow, err := net.Dial("tcp", n.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	fmt.Fprintf(slow, "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", pathACP, n.token)
	slow.SetReadDeadline(time.Now().Add(e2eWait)) // a bound on the test, not the assertion
	if _, err := io.Copy(io.Discard, bufio.NewReader(slow)); err != nil {
		t.Fatalf("the slow client was not cut by the read timeout: %v", err)
	}

	if r := wsCall(t, acp, "ping", nil); r.Error != nil {
		t.Errorf("/acp websocket after the read timeout: %+v", r.Error)
	}
	evs, err := rel.Query(ctx, nostr.Filters{{Kinds: []int{4199}, Limit: 1}})
	if err != nil || len(evs) != 1 {
		t.Errorf("relay websocket after the read timeout: %d events, %v", len(evs), err)
	}
}

// TestForwardedClient: what the relay's rate limiter (khatru.GetIP, and
// policies.ClientIP trusting nothing) sees behind serve's front handler.
// A forged X-Forwarded-For from an untrusted peer is dropped: the peer is
// the client, so one client cannot open a fresh rate-limit bucket per
// connection. From a trusted proxy, the forwarded client.
func TestForwardedClient(t *testing.T) {
	seen := make(chan string, 1)
	inner := http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { seen <- khatru.GetIPFromRequest(r) })
	for _, tc := range []struct {
		name    string
		trusted []netip.Prefix
		want    string
	}{
		{"untrusted peer", nil, "127.0.0.1"},
		{"untrusted peer, other proxies trusted", []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, "127.0.0.1"},
		{"trusted proxy", []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, "198.51.100.7"},
	} {
		srv := httptest.NewServer(forwardedClient(tc.trusted, inner))
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.Header.Set("X-Forwarded-For", "198.51.100.7")
		req.Header.Set("X-Real-IP", "198.51.100.8")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := <-seen; got != tc.want {
			t.Errorf("%s: the relay sees %s, want %s", tc.name, got, tc.want)
		}
		srv.Close()
	}
}

func TestServeConfig_httpSection(t *testing.T) {
	for _, tc := range []struct{ body, err string }{
		{`{"http": {"trusted_proxies": ["10.0.0.0/8", "192.0.2.1", "::1"], "max_body_bytes": 2048, "mcp_max_sessions": 5}}`, ""},
		{`{"http": {"trusted_proxies": ["proxy.example"]}}`, `"http.trusted_proxies"`},
		{`{"http": {"trusted_proxies": ["10.0.0.0/40"]}}`, `"http.trusted_proxies"`},
		{`{"http": {"read_timeout_seconds": -1}}`, `"http.read_timeout_seconds" must be positive`},
		{`{"http": {"max_body_bytes": -5}}`, `"http.max_body_bytes" must be positive`},
		{`{"http": {"max_body": 5}}`, `unknown field "max_body"`},
		{`{"http": []}`, `"http"`},
	} {
		_, err := parseServe(nil, "--config", writeServeConfig(t, tc.body))
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: error %v, want %q", tc.body, err, tc.err)
		}
	}
	c, err := parseServe(nil, "--config", writeServeConfig(t, `{"http": {"trusted_proxies": ["10.0.0.0/8"], "write_timeout_seconds": 7}}`))
	if err != nil {
		t.Fatal(err)
	}
	h := c.httpConfig()
	if len(h.trusted) != 1 || h.WriteTimeout != 7*time.Second || h.ReadTimeout != 30*time.Second || h.MaxBodyBytes != 1<<20 {
		t.Errorf("resolved %+v: want the file's values over the defaults", h)
	}
	// The defaults of the MCP and JSON-RPC keys are those packages' own.
	d := (&ServeCommand{}).httpConfig()
	if d.MCPSessionIdle != mcpserver.DefaultSessionIdle || d.MCPMaxSessions != mcpserver.DefaultMaxSessions ||
		d.MCPMaxSessionsPerIP != mcpserver.DefaultMaxSessionsPerIP || d.MCPSessionUnused != mcpserver.DefaultSessionUnused ||
		d.JSONRPCMaxBatch != jsonrpc.DefaultMaxBatch || d.JSONRPCMaxResponseBytes != jsonrpc.DefaultMaxResponseBytes {
		t.Errorf("defaults %+v: want mcpserver's and jsonrpc's", d)
	}
}

// TestLongWrite: which requests escape the server's WriteTimeout.
func TestLongWrite(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/mcp", writeStream}, {"GET", "/mcp/agents/x", writeStream}, {"POST", "/mcp", writeLong},
		{"POST", pathACP, writeLong}, {"POST", "/cap/agents/x", writeLong}, {"POST", "/api/agents/x/chat", writeLong},
		{"GET", "/api/agents/x", writeNormal}, {"POST", "/api/agents", writeNormal}, {"GET", "/", writeNormal},
	} {
		if got := longWrite(httptest.NewRequest(tc.method, tc.path, nil)); got != tc.want {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, got, tc.want)
		}
	}
}
