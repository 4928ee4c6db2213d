package mcpserver_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentnode/agentnode/capabilities/mcpserver"
)

// clock is a settable time for the session gates.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// openFrom opens a session at url as client address ip (the X-Test-IP
// header that the fixture's ClientIP reads).
func openFrom(t *testing.T, url, ip string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(initialize))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-Test-IP", ip)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp, resp.Header.Get("Mcp-Session-Id")
}

// One address gets MaxSessionsPerIP sessions, then 429 with Retry-After
// and a reason; another address still gets one; sessions that made no
// call are closed once SessionUnused has passed, and a used one stays.
func TestSessionGate_perIPAndUnused(t *testing.T) {
	clk := &clock{t: time.Unix(1_700_000_000, 0)}
	f := setupWith(t, func(o *mcpserver.Options) {
		o.MaxSessions, o.MaxSessionsPerIP, o.SessionUnused, o.SessionIdle = 10, 3, time.Minute, time.Hour
		o.ClientIP = func(r *http.Request) string { return r.Header.Get("X-Test-IP") }
		mcpserver.SetClock(o, clk.now)
	})
	var ids []string
	for range 3 {
		resp, id := openFrom(t, f.url, "203.0.113.1")
		if resp.StatusCode != http.StatusOK || id == "" {
			t.Fatalf("initialize: %d", resp.StatusCode)
		}
		ids = append(ids, id)
	}
	resp, _ := openFrom(t, f.url, "203.0.113.1")
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "60" {
		t.Fatalf("fourth session from one address: %d, Retry-After %q; want 429, 60", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if resp, _ := openFrom(t, f.url, "203.0.113.2"); resp.StatusCode != http.StatusOK {
		t.Fatalf("another address: %d, want 200", resp.StatusCode)
	}
	// ids[0] makes a call (after the initialized notification, which is no call).
	for _, body := range []string{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, `{"jsonrpc":"2.0","id":2,"method":"ping"}`} {
		if resp, text := rawPost(t, f.url+"/mcp", ids[0], strings.NewReader(body)); resp.StatusCode/100 != 2 {
			t.Fatalf("%s: %d %s", body, resp.StatusCode, text)
		}
	}
	clk.add(time.Minute)
	for range 2 { // the two unused places are free again; the used one is kept
		if resp, _ := openFrom(t, f.url, "203.0.113.1"); resp.StatusCode != http.StatusOK {
			t.Fatalf("after SessionUnused: %d, want 200", resp.StatusCode)
		}
	}
	if resp, _ := openFrom(t, f.url, "203.0.113.1"); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("the used session was closed too: %d, want 429", resp.StatusCode)
	}
	if resp, _ := rawPost(t, f.url+"/mcp", ids[1], strings.NewReader(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)); resp.StatusCode != http.StatusNotFound {
		t.Errorf("an expired unused session answered %d, want 404", resp.StatusCode)
	}
	if resp, _ := rawPost(t, f.url+"/mcp", ids[0], strings.NewReader(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)); resp.StatusCode != http.StatusOK {
		t.Errorf("the used session answered %d, want 200", resp.StatusCode)
	}
}

// The addresses of one IPv6 /64 share one per-address budget.
func TestSessionGate_ipv6Slash64(t *testing.T) {
	f := setupWith(t, func(o *mcpserver.Options) {
		o.MaxSessionsPerIP, o.SessionIdle = 2, time.Hour
		o.ClientIP = func(r *http.Request) string { return r.Header.Get("X-Test-IP") }
	})
	for i, ip := range []string{"2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2:ffff::3"} {
		resp, _ := openFrom(t, f.url, ip)
		if want := map[bool]int{true: http.StatusOK, false: http.StatusTooManyRequests}[i < 2]; resp.StatusCode != want {
			t.Fatalf("%s: %d, want %d", ip, resp.StatusCode, want)
		}
	}
	if resp, _ := openFrom(t, f.url, "2001:db8:1:3::1"); resp.StatusCode != http.StatusOK {
		t.Fatalf("another /64: %d, want 200", resp.StatusCode)
	}
}
