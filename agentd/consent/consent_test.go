package consent_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"

	"github.com/agentnode/agentnode/agentd/consent"
)

func open(t *testing.T, path string, p consent.Policy) *consent.Consent {
	t.Helper()
	c, err := consent.Open(context.Background(), consent.Config{Path: path, Policy: p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func agent() string {
	pk, _ := nostr.GetPublicKey(nostr.GeneratePrivateKey())
	return pk
}

func TestConsent_CheckApproveDeny(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "consent.db")
	c := open(t, path, consent.Policy{Require: []string{consent.OpDelegateRemote, consent.MethodOp("tools/call")}})
	a, b := agent(), agent()
	req := consent.Request{Op: consent.OpDelegateRemote, Agent: a, Target: b, Summary: "delegate analysis"}

	if err := c.Check(ctx, consent.Request{Op: consent.OpMessageRemote, Agent: a, Target: b}, ""); err != nil {
		t.Fatalf("an operation the policy does not name: %v", err)
	}
	var pending *consent.PendingError
	if err := c.Check(ctx, req, ""); !errors.As(err, &pending) || !errors.Is(err, consent.ErrPending) {
		t.Fatalf("Check = %v, want a *PendingError", err)
	}
	id := pending.Approval.ID
	if err := c.Check(ctx, req, id); !errors.Is(err, consent.ErrPending) {
		t.Fatalf("still pending: %v", err)
	}
	if err := c.Check(ctx, consent.Request{Op: consent.OpDelegateRemote, Agent: a, Target: a}, id); !errors.Is(err, consent.ErrMismatch) {
		t.Fatalf("other target: %v, want ErrMismatch", err)
	}

	waited := make(chan error, 1)
	go func() { waited <- c.Wait(ctx, id) }()
	if _, err := c.Approve(ctx, id); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-waited:
		if err != nil {
			t.Fatalf("Wait after approve = %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Wait never returned")
	}
	if err := c.Check(ctx, req, id); err != nil {
		t.Fatalf("approved: %v", err)
	}
	if _, err := c.Deny(ctx, id, "late"); !errors.Is(err, consent.ErrDecided) {
		t.Fatalf("deny after approve: %v, want ErrDecided", err)
	}

	err := c.Check(ctx, req, "")
	errors.As(err, &pending)
	if _, err := c.Deny(ctx, pending.Approval.ID, "not to that node"); err != nil {
		t.Fatal(err)
	}
	var denied *consent.DeniedError
	if err := c.Wait(ctx, pending.Approval.ID); !errors.As(err, &denied) || denied.Approval.Reason != "not to that node" {
		t.Fatalf("Wait after deny = %v", err)
	}

	c.Close()
	c2 := open(t, path, consent.Policy{})
	all, err := c2.List(ctx, "")
	if err != nil || len(all) != 2 || all[0].Status != consent.StatusApproved || all[1].Status != consent.StatusDenied {
		t.Fatalf("after reopen: %+v, %v", all, err)
	}
	if c2.Required(consent.OpDelegateRemote) != true || c2.Required(consent.OpPrivateState) {
		t.Fatalf("default policy = %+v", c2.Policy())
	}
}

func TestConsent_Revoke(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "consent.db")
	c := open(t, path, consent.Policy{})
	a := agent()
	npub, _ := nip19.EncodePublicKey(a)
	if _, err := c.Revoke(ctx, npub, "compromised"); err != nil {
		t.Fatal(err)
	}
	if !c.Revoked(t.Context(), a) {
		t.Fatal("not revoked after Revoke(npub)")
	}
	if _, err := c.Revoke(ctx, "bob", ""); !errors.Is(err, consent.ErrBadAgent) {
		t.Fatalf("Revoke(bob) = %v, want ErrBadAgent", err)
	}
	c.Close()
	c2 := open(t, path, consent.Policy{})
	if !c2.Revoked(t.Context(), a) {
		t.Fatal("revocation lost on reopen")
	}
	if was, err := c2.Unrevoke(ctx, a); err != nil || !was || c2.Revoked(t.Context(), a) {
		t.Fatalf("Unrevoke = %v, %v; revoked now %v", was, err, c2.Revoked(t.Context(), a))
	}
}

func TestHandler_Client(t *testing.T) {
	ctx := context.Background()
	c := open(t, filepath.Join(t.TempDir(), "consent.db"), consent.Policy{})
	srv := httptest.NewServer(consent.OwnerHandler(c, "s3cret", nil, nil))
	defer srv.Close()
	cl := &consent.Client{BaseURL: srv.URL, Token: "s3cret"}
	a, b := agent(), agent()
	err := c.Check(ctx, consent.Request{Op: consent.OpDelegateRemote, Agent: a, Target: b}, "")
	var p *consent.PendingError
	if !errors.As(err, &p) {
		t.Fatal(err)
	}

	ov, err := cl.Overview(ctx, consent.StatusPending)
	if err != nil || len(ov.Approvals) != 1 || ov.Approvals[0].ID != p.Approval.ID {
		t.Fatalf("Overview = %+v, %v", ov, err)
	}
	if got, err := cl.Deny(ctx, p.Approval.ID, "no"); err != nil || got.Status != consent.StatusDenied {
		t.Fatalf("Deny = %+v, %v", got, err)
	}
	if _, err := cl.Approve(ctx, p.Approval.ID); !errors.Is(err, consent.ErrDecided) {
		t.Fatalf("Approve decided = %v, want ErrDecided", err)
	}
	if _, err := cl.Approve(ctx, "nope"); !errors.Is(err, consent.ErrNotFound) {
		t.Fatalf("Approve(nope) = %v, want ErrNotFound", err)
	}
	if _, err := cl.Revoke(ctx, a, "gone"); err != nil || !c.Revoked(t.Context(), a) {
		t.Fatalf("Revoke over HTTP: %v", err)
	}
	if was, err := cl.Unrevoke(ctx, a); err != nil || !was || c.Revoked(t.Context(), a) {
		t.Fatalf("Unrevoke over HTTP: %v, %v", was, err)
	}
	bad := &consent.Client{BaseURL: srv.URL, Token: "wrong"}
	var apiErr *consent.APIError
	if _, err := bad.Overview(ctx, ""); !errors.As(err, &apiErr) || apiErr.Status != 401 || !strings.Contains(apiErr.Message, "token") {
		t.Fatalf("wrong token: %v", err)
	}
}
