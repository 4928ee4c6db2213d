package hostile

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/relayclient"
)

// A client that sends a different X-Forwarded-For on each connection used
// to get a fresh per-IP budget each time. Now the header counts only from
// a trusted proxy.
func TestSpoofedForwardedFor_doesNotMultiplyTheRateLimit(t *testing.T) {
	const burst = 5
	relayCfg := map[string]any{"events_per_second": 1, "events_burst": burst}
	accepted := func(n *node) int {
		ok := 0
		for i := range 2 {
			h := http.Header{"X-Forwarded-For": {fmt.Sprintf("203.0.113.%d", i+1)}}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			c, err := relayclient.Dial(ctx, n.url, relayclient.Options{Header: h})
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			sk := nostr.GeneratePrivateKey()
			for j := range 2 * burst {
				if _, err := publish(c, sk, 1, nil, fmt.Sprint("spoof ", i, j), 5*time.Second); err == nil {
					ok++
				} else if !strings.Contains(err.Error(), "rate-limited:") {
					t.Fatalf("publish: %v, want OK or rate-limited:", err)
				}
			}
			c.Close()
		}
		return ok
	}
	untrusted := startNodeWith(t, map[string]any{"relay": relayCfg})
	if got := accepted(untrusted); got > burst+2 { // +2: what one event per second refills meanwhile
		t.Errorf("untrusted peer with two forged addresses: %d events accepted, want at most %d (one budget)", got, burst+2)
	}
	trusted := startNodeWith(t, map[string]any{"relay": relayCfg, "http": map[string]any{"trusted_proxies": []string{"127.0.0.1/32"}}})
	if got := accepted(trusted); got < 2*burst {
		t.Errorf("trusted proxy forwarding two clients: %d events accepted, want at least %d (a budget each)", got, 2*burst)
	}
}

// /mcp is unauthenticated: a huge body used to be read whole (+470 MB for
// 256 MiB) and sessions never expired. Now a body over the limit gets 413
// without being read, and an idle session is gone after its timeout.
func TestMCP_bodyLimitAndSessionExpiry(t *testing.T) {
	n := startNodeWith(t, map[string]any{"http": map[string]any{"max_body_bytes": 64 << 10, "mcp_session_idle_seconds": 1}})
	url := "http://" + n.addr + "/mcp"
	big := bytes.Repeat([]byte(" "), 8<<20)
	resp, err := mcpPost(url, "", big)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("8 MiB POST /mcp: status %d, want 413", resp.StatusCode)
	}
	init := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"hostile","version":"1"}}}`)
	resp, err = mcpPost(url, "", init)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: status %d, session %q", resp.StatusCode, session)
	}
	ping := []byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	// Any request on the session would keep it alive: stay idle for three
	// timeouts, then ask once.
	time.Sleep(3 * time.Second)
	resp, err = mcpPost(url, session, ping)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("a session idle for 3 s (timeout 1 s) answered %d, want 404", resp.StatusCode)
	}
	if !n.healthy() {
		t.Fatal("/healthz does not answer")
	}
}

func mcpPost(url, session string, body []byte) (*http.Response, error) {
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	return (&http.Client{Timeout: 30 * time.Second}).Do(req)
}

// A 1 MB JSON-RPC batch of `1`s on /acp was answered with 42 MB; now the
// batch is refused whole with one short error.
func TestACP_batchAmplificationIsRefused(t *testing.T) {
	n := startNode(t, nil)
	batch := "[" + strings.TrimSuffix(strings.Repeat("1,", 500_000), ",") + "]"
	req, _ := http.NewRequest(http.MethodPost, "http://"+n.addr+"/acp", strings.NewReader(batch))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+n.token(t))
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if len(body) > 4096 || !strings.Contains(string(body), "-32600") {
		t.Fatalf("1 MB batch: %d-byte answer %.200q, want one short -32600", len(body), body)
	}
	if !n.healthy() {
		t.Fatal("/healthz does not answer")
	}
}
