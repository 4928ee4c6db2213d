package mcpserver_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentnode/agentnode/capabilities/mcpserver"
)

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// rawPost posts body to url as an MCP client would; session "" opens one.
func rawPost(t *testing.T, url, session string, body io.Reader) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// TestNew_bodyLimit: the unauthenticated /mcp took a 256 MiB body whole.
// Over MaxBodyBytes it is 413, declared or chunked, and the endpoint
// still opens sessions afterwards.
func TestNew_bodyLimit(t *testing.T) {
	f := setupWith(t, func(o *mcpserver.Options) { o.MaxBodyBytes = 64 << 10 })
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 1<<20) + `"}}`
	for name, body := range map[string]io.Reader{
		"declared": strings.NewReader(big),
		"chunked":  io.MultiReader(strings.NewReader(big)), // no length known: sent chunked
	} {
		resp, text := rawPost(t, f.url+"/mcp", "", body)
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("%s: %d %.100s, want 413", name, resp.StatusCode, text)
		}
	}
	resp, text := rawPost(t, f.url+"/mcp", "", strings.NewReader(initialize))
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize after the refusals: %d %.200s", resp.StatusCode, text)
	}
}

// TestNew_sessionCapAndIdle: the finding was 3,000 sessions opened in
// 1.2 s, none ever closed. With MaxSessions 2, a third initialize is 503
// with Retry-After (and DELETE frees a place); an idle session closes by
// itself after SessionIdle, which the next initialize finds out (the
// refusals in between do not touch the open sessions).
func TestNew_sessionCap(t *testing.T) {
	// Sessions never go idle here: on a loaded machine a short idle
	// timeout could end them between two requests of the test.
	f := setupWith(t, func(o *mcpserver.Options) { o.MaxSessions = 2; o.SessionIdle = time.Hour })
	open := opener(t, f.url)
	var ids []string
	for range 2 {
		status, id := open()
		if status != http.StatusOK || id == "" {
			t.Fatalf("initialize: %d, want 200 with a session", status)
		}
		ids = append(ids, id)
	}
	if status, _ := open(); status != http.StatusServiceUnavailable {
		t.Fatalf("third session: %d, want 503", status)
	}
	del, _ := http.NewRequest(http.MethodDelete, f.url+"/mcp", nil)
	del.Header.Set("Mcp-Session-Id", ids[1])
	if resp, err := http.DefaultClient.Do(del); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	if status, _ := open(); status != http.StatusOK {
		t.Fatalf("after a DELETE: %d, want 200", status)
	}
}

// Idle sessions end by themselves: with the cap reached, a new session is
// admitted once the idle ones have expired, and the old ids are gone.
func TestNew_sessionIdle(t *testing.T) {
	f := setupWith(t, func(o *mcpserver.Options) { o.MaxSessions = 2; o.SessionIdle = 200 * time.Millisecond })
	open := opener(t, f.url)
	var ids []string
	for range 2 {
		if status, id := open(); status == http.StatusOK {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		t.Fatal("no session opened")
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		status, _ := open()
		if status == http.StatusOK {
			break
		}
		if status != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("the idle sessions never closed: last answer %d", status)
		}
	}
	time.Sleep(400 * time.Millisecond) // two idle timeouts, with no request that would renew ids[0]
	resp, _ := rawPost(t, f.url+"/mcp", ids[0], bytes.NewReader([]byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)))
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("a request on an expired session: %d, want 404", resp.StatusCode)
	}
}

// opener returns a function that opens one MCP session at url+"/mcp" and
// reports the status and session id.
func opener(t *testing.T, url string) func() (int, string) {
	return func() (int, string) {
		resp, _ := rawPost(t, url+"/mcp", "", strings.NewReader(initialize))
		if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") == "" {
			t.Error("503 without Retry-After")
		}
		return resp.StatusCode, resp.Header.Get("Mcp-Session-Id")
	}
}
