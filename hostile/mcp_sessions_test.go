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
	// Unused sessions expire after 6 s: long enough for the flood to end
	// on a busy machine before its first sessions go (the counts below
	// assume it), short enough to see them go.
	n := startNodeWith(t, map[string]any{"http": map[string]any{"mcp_max_sessions": total, "mcp_session_unused_seconds": 6}})
	url := "http://" + n.addr + "/mcp"
	flooder, other := fromAddr("127.0.0.1"), fromAddr("127.0.0.2")

	codes, refused := floodInitialize(t, flooder, url, flood)
	if codes[http.StatusOK] == 0 || codes[http.StatusOK] >= total {
		t.Fatalf("flood of %d initialize from one address: %v, want some sessions and far fewer than the node's %d", flood, codes, total)
	}
	if codes[http.StatusTooManyRequests] == 0 {
		t.Fatalf("flood of %d initialize from one address: %v, want the excess refused with 429", flood, codes)
	}
	if refused.Header.Get("Retry-After") == "" || !strings.Contains(refused.body, "too many sessions from your address") {
		t.Fatalf("a refused initialize: Retry-After %q, %q; want Retry-After and a reason", refused.Header.Get("Retry-After"), refused.body)
	}
	if status, _, body := initialize(t, other, url); status != http.StatusOK {
		t.Fatalf("another address's initialize after the flood: %d %q, want 200", status, body)
	}
	// The flood's sessions made no call: they go after 6 s, and the
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
	status, hdr, body, err := tryInitialize(c, url)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return status, hdr, body
}

// tryInitialize is initialize for any goroutine: it returns the error.
func tryInitialize(c *http.Client, url string) (int, http.Header, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(initializeBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, resp.Header, string(b), nil
}

// answer is one HTTP answer's headers and body.
type answer struct {
	http.Header
	body string
}

// floodInitialize sends count initialize requests from c, 16 at a time,
// and counts the statuses; refused is one 429 answer (if any).
func floodInitialize(t *testing.T, c *http.Client, url string, count int) (codes map[int]int, refused answer) {
	t.Helper()
	var mu sync.Mutex
	codes = map[int]int{}
	jobs := make(chan struct{})
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range jobs {
				status, hdr, body, err := tryInitialize(c, url)
				if err != nil {
					t.Errorf("initialize: %v", err)
				}
				mu.Lock()
				codes[status]++
				if status == http.StatusTooManyRequests {
					refused = answer{hdr, body}
				}
				mu.Unlock()
			}
		})
	}
	for range count {
		jobs <- struct{}{}
	}
	close(jobs)
	wg.Wait()
	return codes, refused
}
