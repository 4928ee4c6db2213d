package web_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/agentd/consent"
	"github.com/agentnode/agentnode/relay"
	"github.com/agentnode/agentnode/web"
)

// The owner console refuses every change without a signed-in session and
// its CSRF token, even from a browser holding the session cookie; a signed
// out session is gone; with no token configured nobody signs in.
func TestConsole_sessionsAndCSRF(t *testing.T) {
	ctx := context.Background()
	rel, err := relay.Open(ctx, relay.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rel.Close(ctx) })
	store, err := consent.Open(ctx, consent.Config{Path: filepath.Join(t.TempDir(), "consent.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	serve := func(token string) *httptest.Server {
		mux := http.NewServeMux()
		web.New(web.Config{Store: rel, Consent: store, Token: token}).Mount(mux, rel)
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		return srv
	}
	srv := serve("secret-token")
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	post := func(path string, form url.Values) (int, string) {
		resp, err := browser.PostForm(srv.URL+path, form)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	asked, _ := store.Ask(ctx, consent.Request{Op: "delegate.remote", Agent: strings.Repeat("a", 64)})

	if status, _ := post("/console/approvals/"+asked.ID+"/approve", url.Values{}); status != http.StatusForbidden {
		t.Errorf("approve without a session: %d, want 403", status)
	}
	if status, _ := post("/console/login", url.Values{"token": {"secret-token"}}); status != http.StatusOK {
		t.Fatalf("sign in: %d", status)
	}
	if status, _ := post("/console/approvals/"+asked.ID+"/approve", url.Values{"csrf": {"forged"}}); status != http.StatusForbidden {
		t.Errorf("approve with a forged CSRF token: %d, want 403", status)
	}
	if a, _ := store.Get(ctx, asked.ID); a.Status != consent.StatusPending {
		t.Fatalf("a refused request changed the approval: %s", a.Status)
	}
	_, page := post("/console/login", url.Values{"token": {"secret-token"}})
	csrf := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(page)
	if csrf == nil {
		t.Fatalf("no CSRF token on the console page")
	}
	if status, page := post("/console/approvals/"+asked.ID+"/deny", url.Values{"csrf": {csrf[1]}, "reason": {"not now"}}); status != http.StatusOK || !strings.Contains(page, "denied "+asked.ID) {
		t.Errorf("deny: %d", status)
	}
	if a, _ := store.Get(ctx, asked.ID); a.Status != consent.StatusDenied || a.Reason != "not now" {
		t.Errorf("after deny: %+v", a)
	}
	post("/console/logout", url.Values{"csrf": {csrf[1]}})
	if status, _ := post("/console/revoke", url.Values{"csrf": {csrf[1]}, "agent": {strings.Repeat("b", 64)}}); status != http.StatusForbidden {
		t.Errorf("revoke after signing out: %d, want 403", status)
	}

	open := serve("") // no API token: nobody signs in
	resp, err := http.PostForm(open.URL+"/console/login", url.Values{"token": {""}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("sign in with no token configured: %d, want 401", resp.StatusCode)
	}
}
