package web_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/internal/testkit/testrelay"
	"github.com/agentnode/agentnode/relay"
	"github.com/agentnode/agentnode/web"
)

// openSite serves a Site of pageSize over a fresh relay and a real
// directory following it; the relay also serves what is not a page.
func openSite(t *testing.T, pageSize int) (*relay.Relay, *httptest.Server) {
	t.Helper()
	return openSiteWith(t, web.Config{PageSize: pageSize})
}

// openSiteWith is openSite with cfg (Store and Directory are set here).
func openSiteWith(t *testing.T, cfg web.Config) (*relay.Relay, *httptest.Server) {
	t.Helper()
	rel := testrelay.Open(t)
	dir := directory.New(directory.Config{Source: rel, Logger: quiet})
	testkit.Run(t, "directory", dir.Run, dir.Ready())
	cfg.Store, cfg.Directory = rel, dir
	mux := http.NewServeMux()
	web.New(cfg).Mount(mux, rel)
	mux.Handle("/", rel)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return rel, srv
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func get(t *testing.T, url string, header ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestSite_IndexHandsNIP11ToTheRelay: / is the page for a browser and
// the NIP-11 document for Accept: application/nostr+json; the page
// carries the CSP.
func TestSite_IndexHandsNIP11ToTheRelay(t *testing.T) {
	_, srv := openSite(t, 0)
	resp, body := get(t, srv.URL+"/")
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") || !strings.Contains(body, "<h1>Directory</h1>") {
		t.Errorf("GET /: %s %q", ct, body)
	}
	if got := resp.Header.Get("Content-Security-Policy"); got != web.ContentSecurityPolicy {
		t.Errorf("CSP %q", got)
	}
	resp, body = get(t, srv.URL+"/", "Accept", "application/nostr+json")
	if ct := resp.Header.Get("Content-Type"); ct != "application/nostr+json" || !strings.Contains(body, `"supported_nips"`) {
		t.Errorf("NIP-11: %s %q", ct, body)
	}
}

// TestSite_DefinitionPagesWalkEveryDefinitionOnce: with many definitions
// created in the same second, following "older definitions" from the
// first page lists each exactly once.
func TestSite_DefinitionPagesWalkEveryDefinitionOnce(t *testing.T) {
	rel, srv := openSite(t, 3)
	sk := nostr.GeneratePrivateKey()
	want := map[string]bool{}
	for i := range 11 {
		evt := nostr.Event{Kind: 4199, CreatedAt: nostr.Timestamp(1_700_000_000 + i/4), Tags: nostr.Tags{{"title", fmt.Sprintf("def %d", i)}}}
		if err := evt.Sign(sk); err != nil {
			t.Fatal(err)
		}
		if err := rel.Publish(context.Background(), &evt); err != nil {
			t.Fatal(err)
		}
		want[evt.ID] = true
	}
	rowRE := regexp.MustCompile(`data-definition="([0-9a-f]{64})"`)
	nextRE := regexp.MustCompile(`href="/\?([^"]+)" rel="next">older definitions`)
	waitDefinitions(t, srv, len(want))
	seen := map[string]int{}
	next := ""
	for page := 0; page < 10; page++ {
		_, body := get(t, srv.URL+"/?"+strings.ReplaceAll(next, "&amp;", "&"))
		for _, m := range rowRE.FindAllStringSubmatch(body, -1) {
			seen[m[1]]++
		}
		m := nextRE.FindStringSubmatch(body)
		if m == nil {
			break
		}
		next = m[1]
	}
	for id := range want {
		if seen[id] != 1 {
			t.Errorf("definition %s listed %d times", id, seen[id])
		}
	}
	if len(seen) != len(want) {
		t.Errorf("listed %d definitions, want %d", len(seen), len(want))
	}
}

// waitDefinitions waits until the directory page counts n definitions.
func waitDefinitions(t *testing.T, srv *httptest.Server, n int) {
	t.Helper()
	want := fmt.Sprintf(`<h2 id="defs-h">Definitions <small>(%d)</small>`, n)
	testkit.WaitFor(t, 10*time.Second, "the directory to index the definitions", func() bool {
		_, body := get(t, srv.URL+"/")
		return strings.Contains(body, want)
	})
}
