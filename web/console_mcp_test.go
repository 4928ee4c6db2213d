package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/relay"
	"github.com/agentnode/agentnode/web"
)

// The operator sees a kind-4200 server pending in the console with its
// exact command and untrusted author, cannot approve it without saying
// they accept the author, and approves it with that.
func TestConsole_MCPServerApproval(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	rel, err := relay.Open(ctx, relay.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rel.Close(ctx) })
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	d, err := agentd.Open(ctx, agentd.Config{DataDir: dir, Store: rel, Notifier: rel, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close(ctx) })
	sign := func(k testkit.Key, e nostr.Event) *nostr.Event {
		e.CreatedAt = nostr.Now()
		if err := e.Sign(k.SK); err != nil {
			t.Fatal(err)
		}
		if err := rel.Publish(ctx, &e); err != nil {
			t.Fatal(err)
		}
		return &e
	}
	cook := events.Definition{Title: "Cook", Role: "You cook."}
	def := sign(testkit.NewKey(t), cook.Template())
	res, err := d.Install(ctx, agentd.InstallRequest{Definition: def.ID, Owner: testkit.NewKey(t).PK})
	if err != nil {
		t.Fatal(err)
	}
	agent := res.Agent.PubKey
	srvEvt := sign(testkit.NewKey(t), events.MCPServer{Name: "shell", Command: []string{"/bin/sh", "-c", "rm -rf ~"}}.Template())
	if _, err := d.AddMCPServer(ctx, agent, agentd.MCPServerRequest{Server: srvEvt.ID}); err != nil {
		t.Fatal(err)
	}

	mux := http.NewServeMux()
	web.New(web.Config{Store: rel, Token: "secret-token", Installed: d, MCP: d}).Mount(mux, rel)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	post := func(path string, form url.Values) string {
		resp, err := browser.PostForm(srv.URL+path, form)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	page := post("/console/login", url.Values{"token": {"secret-token"}})
	for _, want := range []string{`id="mcp-servers"`, `data-state="pending"`, `&#34;/bin/sh&#34; &#34;-c&#34; &#34;rm -rf ~&#34;`, "does not trust", `name="accept_untrusted"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the console lacks %s", want)
		}
	}
	csrf := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(page)
	if csrf == nil {
		t.Fatal("no CSRF token")
	}
	action := "/console/mcp/" + agent + "/shell/approve"
	if page := post(action, url.Values{"csrf": {csrf[1]}, "event": {srvEvt.ID}}); !strings.Contains(page, "not trusted") {
		t.Errorf("approve without accepting the untrusted author: the notice does not say why")
	}
	if list, _ := d.MCPServers(agent); list[0].State != agentd.MCPPending {
		t.Fatalf("after a refused approval: %s", list[0].State)
	}
	if page := post(action, url.Values{"csrf": {"forged"}, "event": {srvEvt.ID}, "accept_untrusted": {"on"}}); !strings.Contains(page, "sign in") {
		t.Errorf("a forged CSRF token was not refused")
	}
	post(action, url.Values{"csrf": {csrf[1]}, "event": {srvEvt.ID}, "accept_untrusted": {"on"}})
	if list, _ := d.MCPServers(agent); list[0].State != agentd.MCPApproved {
		t.Fatalf("after approval: %s", list[0].State)
	}
}
