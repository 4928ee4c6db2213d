package agentd_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
)

// serve mounts the daemon's API on the relay, as `agentnode serve` does.
func serve(t *testing.T, n *node) *httptest.Server {
	t.Helper()
	h := n.d.Handler()
	n.r.Handle("/api/agents", h)
	n.r.Handle("/api/agents/", h)
	srv := httptest.NewServer(n.r)
	t.Cleanup(srv.Close)
	return srv
}

func TestHandler(t *testing.T) {
	n := openNode(t, agentd.Config{})
	srv := serve(t, n)
	token, err := agentd.ReadToken(n.dir)
	if err != nil || len(token) != 64 {
		t.Fatalf("token %q: %v", token, err)
	}
	c := &agentd.Client{BaseURL: srv.URL, Token: token}
	anon := &agentd.Client{BaseURL: srv.URL}
	ctx := context.Background()
	author, owner := testkit.NewKey(t), testkit.NewKey(t)
	def := n.definition(author, reviewer())

	if _, err := anon.Install(ctx, agentd.InstallRequest{Definition: def.ID, Owner: owner.PK}); !errors.Is(err, agentd.ErrUnauthorized) {
		t.Fatalf("install without the token: %v", err)
	}
	res, err := c.Install(ctx, agentd.InstallRequest{Definition: def.ID, Owner: owner.PK, Name: "HTTP Reviewer"})
	if err != nil || !res.Created {
		t.Fatalf("install: %+v, %v", res, err)
	}
	if again, _ := c.Install(ctx, agentd.InstallRequest{Definition: def.ID, Owner: owner.PK, Name: "HTTP Reviewer"}); again.Created || again.Agent.PubKey != res.Agent.PubKey {
		t.Errorf("second install over HTTP: %+v", again)
	}

	list, err := anon.List(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("list (no token needed): %v, %v", list, err)
	}
	v, err := anon.Show(ctx, "HTTP Reviewer") // by name, with a space
	if err != nil || v.PubKey != res.Agent.PubKey || v.Definition.ID != def.ID || v.Ownership.Verified {
		t.Fatalf("show: %+v, %v", v, err)
	}

	lesson, err := c.Learn(ctx, res.Npub, "Over HTTP", "api", "Learned through the API.")
	if err != nil || lesson.PubKey != res.Agent.PubKey {
		t.Fatalf("learn: %v, %v", lesson, err)
	}
	eff, err := anon.Effective(ctx, res.Npub, nil)
	if err != nil || !inPrompt(eff, lesson.ID) {
		t.Fatalf("effective: %v; prompt %q", err, eff.Prompt)
	}

	nudge := n.nudge(testkit.NewKey(t).SK, events.Nudge{Title: "web", AllowTools: []string{"web_search"}})
	if eff, err := anon.Effective(ctx, res.Npub, []string{nudge.ID}); err != nil || !strings.Contains(strings.Join(eff.Tools, ","), "web_search") {
		t.Errorf("effective with a message nudge: %v, %v", eff.Tools, err)
	}
	if ch, err := c.AddNudge(ctx, res.Npub, nudge.ID); err != nil || !ch.Changed {
		t.Errorf("add nudge: %+v, %v", ch, err)
	}
	if ch, err := c.RemoveNudge(ctx, res.Npub, nudge.ID); err != nil || !ch.Changed || len(ch.Agent.Nudges) != 0 {
		t.Errorf("remove nudge: %+v, %v", ch, err)
	}
	if plan, err := anon.PlanUpgrade(ctx, res.Npub, ""); err != nil || !plan.UpToDate {
		t.Errorf("plan: %+v, %v", plan, err)
	}
	if a, err := c.SetAutoUpgrade(ctx, res.Npub, true); err != nil || !a.AutoUpgrade {
		t.Errorf("auto-upgrade: %+v, %v", a, err)
	}

	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"unknown agent", func() error { _, err := anon.Show(ctx, "nobody"); return err }(), agentd.ErrUnknownAgent},
		{"bad ref", func() error {
			_, err := c.Install(ctx, agentd.InstallRequest{Definition: "x", Owner: owner.PK})
			return err
		}(), agentd.ErrBadRequest},
		{"remove without token", func() error { _, err := anon.Remove(ctx, res.Npub, false); return err }(), agentd.ErrUnauthorized},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}

	// A browser page cannot write: no token, no install (CORS lets it send).
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/agents", strings.NewReader(`{"definition":"`+def.ID+`","owner":"`+owner.PK+`"}`))
	req.Header.Set("Origin", "https://evil.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("cross-origin install: HTTP %d, want 401", resp.StatusCode)
	}

	if rm, err := c.Remove(ctx, res.Npub, false); err != nil || rm.Agent.PubKey != res.Agent.PubKey {
		t.Errorf("remove: %+v, %v", rm, err)
	}
}
