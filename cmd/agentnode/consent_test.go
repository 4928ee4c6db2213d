package main

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr/nip19"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/consent"
	"github.com/agentnode/agentnode/internal/testkit"
)

// consentNode is the consent API as a node mounts it, with the node's
// token in <data>/agents/api.token.
func consentNode(t *testing.T) (*consent.Consent, map[string]string) {
	t.Helper()
	data := t.TempDir()
	token := strings.Repeat("ab", 32)
	if err := os.MkdirAll(filepath.Dir(agentd.TokenPath(data)), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(agentd.TokenPath(data), []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := consent.Open(context.Background(), consent.Config{Path: filepath.Join(data, "agents", "consent.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	srv := httptest.NewServer(consent.OwnerHandler(c, token, nil, nil))
	t.Cleanup(srv.Close)
	return c, map[string]string{"AGENTNODE_NODE": srv.URL, "AGENTNODE_DATA": data}
}

func TestConsentCLI(t *testing.T) {
	ctx := context.Background()
	c, env := consentNode(t)
	alicePK := testkit.NewKey(t).PK
	bobPK := testkit.NewKey(t).PK
	req := consent.Request{Op: consent.OpDelegateRemote, Agent: alicePK, Target: bobPK, Summary: "delegate task t1 (analysis) to a remote agent"}
	var p1, p2 *consent.PendingError
	errors.As(c.Check(ctx, req, ""), &p1)
	errors.As(c.Check(ctx, req, ""), &p2)
	if p1 == nil || p2 == nil {
		t.Fatal("no pending approvals")
	}

	out := mustCLI(t, env, "consent", "list", "--status", "pending")
	if !strings.Contains(out, p1.Approval.ID) || !strings.Contains(out, p2.Approval.ID) || !strings.Contains(out, "delegate.remote") {
		t.Fatalf("consent list:\n%s", out)
	}
	if out := mustCLI(t, env, "consent", "approve", p1.Approval.ID); !strings.HasPrefix(out, "approved "+p1.Approval.ID) {
		t.Fatalf("consent approve: %s", out)
	}
	if err := c.Check(ctx, req, p1.Approval.ID); err != nil {
		t.Fatalf("approved from the CLI, Check = %v", err)
	}
	mustCLI(t, env, "consent", "deny", p2.Approval.ID, "--reason", "not that node")
	var denied *consent.DeniedError
	if err := c.Check(ctx, req, p2.Approval.ID); !errors.As(err, &denied) || denied.Approval.Reason != "not that node" {
		t.Fatalf("denied from the CLI, Check = %v", err)
	}
	if r := cli(t, env, "consent", "approve", p2.Approval.ID); r.err == nil || !strings.Contains(r.err.Error(), "already decided") {
		t.Fatalf("approving a denied approval: %v", r.err)
	}

	bobNpub, _ := nip19.EncodePublicKey(bobPK)
	mustCLI(t, env, "consent", "revoke", bobNpub, "--reason", "lost key")
	if !c.Revoked(t.Context(), bobPK) {
		t.Fatal("not revoked after `consent revoke`")
	}
	if out := mustCLI(t, env, "consent", "list", "--json"); !strings.Contains(out, `"agent": "`+bobPK+`"`) || !strings.Contains(out, "lost key") {
		t.Fatalf("consent list --json:\n%s", out)
	}
	mustCLI(t, env, "consent", "unrevoke", bobPK)
	if c.Revoked(t.Context(), bobPK) {
		t.Fatal("still revoked after `consent unrevoke`")
	}

	env["AGENTNODE_API_TOKEN"] = "wrong"
	if r := cli(t, env, "consent", "list"); r.err == nil || !strings.Contains(r.err.Error(), "token") {
		t.Fatalf("wrong token: %v", r.err)
	}
}

func mustCLI(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	r := cli(t, env, args...)
	if r.err != nil {
		t.Fatalf("agentnode %s: %v\n%s", strings.Join(args, " "), r.err, r.stderr)
	}
	return r.stdout
}
