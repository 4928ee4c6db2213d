package hostile

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentnode/agentnode/internal/testkit"
)

// One address could fill every MCP session with `initialize` and lock
// everyone out for the session idle time (30 min). Now each address has
// its own cap (429 with Retry-After and a reason beyond it), a session
// that never made a call after initialize is closed after
// mcp_session_unused_seconds, and another address still gets a session.
func TestMCP_initializeFloodFromOneAddress(t *testing.T) {
	const total, flood = 200, 300
	n := startNodeWith(t, map[string]any{"http": map[string]any{"mcp_max_sessions": total, "mcp_session_unused_seconds": 2}})
	url := "http://" + n.addr + "/mcp"
	flooder, other := fromAddr("127.0.0.1"), fromAddr("127.0.0.2")

	codes := floodInitialize(t, flooder, url, flood)
	if codes[http.StatusOK] == 0 || codes[http.StatusOK] >= total {
		t.Fatalf("flood of %d initialize from one address: %v, want some sessions and far fewer than the node's %d", flood, codes, total)
	}
	if codes[http.StatusTooManyRequests] == 0 {
		t.Fatalf("flood of %d initialize from one address: %v, want the excess refused with 429", flood, codes)
	}
	status, hdr, body := initialize(t, flooder, url)
	if status != http.StatusTooManyRequests || hdr.Get("Retry-After") == "" || !strings.Contains(body, "too many sessions from your address") {
		t.Fatalf("the flooder's next initialize: %d, Retry-After %q, %q; want 429 with Retry-After and a reason", status, hdr.Get("Retry-After"), body)
	}
	if status, _, body := initialize(t, other, url); status != http.StatusOK {
		t.Fatalf("another address's initialize after the flood: %d %q, want 200", status, body)
	}
	// The flood's sessions made no call: they go after 2 s, and the
	// flooder's address may open sessions again.
	testkit.WaitFor(t, 30*time.Second, "the flooder's unused sessions to expire", func() bool {
		status, _, _ := initialize(t, flooder, url)
		return status == http.StatusOK
	})
	if !n.healthy() {
		t.Fatal("/healthz does not answer")
	}
}

// fromAddr is an HTTP client whose connections come from the loopback
// address ip (the whole of 127.0.0.0/8 is local on Linux).
func fromAddr(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 16}}
}

var initializeBody = []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"hostile","version":"1"}}}`)

// initialize opens an MCP session with c: status, headers and body.
func initialize(t *testing.T, c *http.Client, url string) (int, http.Header, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(initializeBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, resp.Header, string(b)
}

// floodInitialize sends count initialize requests from c, 16 at a time,
// and counts the statuses.
func floodInitialize(t *testing.T, c *http.Client, url string, count int) map[int]int {
	t.Helper()
	var mu sync.Mutex
	codes := map[int]int{}
	jobs := make(chan struct{})
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range jobs {
				status, _, _ := initialize(t, c, url)
				mu.Lock()
				codes[status]++
				mu.Unlock()
			}
		})
	}
	for range count {
		jobs <- struct{}{}
	}
	close(jobs)
	wg.Wait()
	return codes
}
