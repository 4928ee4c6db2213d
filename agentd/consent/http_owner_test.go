package consent_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/consent"
)

// An owner calls the consent API with NIP-98 and sees and decides only
// the agents they own; another owner's approval or agent is 403
// "forbidden"; a key owning nothing is 403; a replayed or malformed
// header is 401; the API token still sees everything.
func TestOwnerHandler_scopesOwners(t *testing.T) {
	ctx := context.Background()
	c := open(t, filepath.Join(t.TempDir(), "consent.db"), consent.Policy{})
	ownerSK, otherSK := nostr.GeneratePrivateKey(), nostr.GeneratePrivateKey()
	owner, _ := nostr.GetPublicKey(ownerSK)
	other, _ := nostr.GetPublicKey(otherSK)
	mineAgent, theirAgent := agent(), agent()
	owned := map[string][]string{owner: {mineAgent}, other: {theirAgent}}
	srv := httptest.NewServer(consent.OwnerHandler(c, "s3cret", func(pk string) []string { return owned[pk] }, nil))
	defer srv.Close()
	ask := func(a string) consent.Approval {
		ap, err := c.Ask(ctx, consent.Request{Op: consent.OpDelegateRemote, Agent: a, Target: agent()})
		if err != nil {
			t.Fatal(err)
		}
		return ap
	}
	mine, theirs := ask(mineAgent), ask(theirAgent)

	call := func(sk, method, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if sk == "token" {
			req.Header.Set("Authorization", "Bearer s3cret")
		} else if sk != "" {
			req.Header.Set("Authorization", nip98(t, sk, method, srv.URL+path))
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	overview := func(sk string) consent.Overview {
		t.Helper()
		status, body := call(sk, "GET", "/api/consent", "")
		var ov consent.Overview
		if status != 200 || json.Unmarshal([]byte(body), &ov) != nil {
			t.Fatalf("GET /api/consent: %d %s", status, body)
		}
		return ov
	}
	if ov := overview(ownerSK); len(ov.Approvals) != 1 || ov.Approvals[0].ID != mine.ID {
		t.Errorf("the owner sees %+v, want only their approval %s", ov.Approvals, mine.ID)
	}
	if ov := overview("token"); len(ov.Approvals) != 2 {
		t.Errorf("the operator sees %d approvals, want both", len(ov.Approvals))
	}
	if status, body := call(ownerSK, "POST", "/api/consent/approvals/"+theirs.ID+"/approve", ""); status != 403 || !strings.Contains(body, `"forbidden"`) {
		t.Errorf("approving another owner's request: %d %s, want 403 forbidden", status, body)
	}
	if status, body := call(ownerSK, "POST", "/api/consent/revoked", `{"agent":"`+theirAgent+`"}`); status != 403 {
		t.Errorf("revoking another owner's agent: %d %s, want 403", status, body)
	}
	if status, body := call(ownerSK, "POST", "/api/consent/approvals/"+mine.ID+"/approve", ""); status != 200 || !strings.Contains(body, `"approved"`) {
		t.Errorf("approving their own request: %d %s", status, body)
	}
	if status, body := call(ownerSK, "POST", "/api/consent/revoked", `{"agent":"`+mineAgent+`","reason":"lost key"}`); status != 200 {
		t.Errorf("revoking their own agent: %d %s", status, body)
	}
	if status, body := call(nostr.GeneratePrivateKey(), "GET", "/api/consent", ""); status != 403 || !strings.Contains(body, "no agent on this node names this key") {
		t.Errorf("a key owning nothing: %d %s, want 403", status, body)
	}
	replay := nip98(t, ownerSK, "GET", srv.URL+"/api/consent")
	for i, want := range []int{200, 401} {
		req, _ := http.NewRequest("GET", srv.URL+"/api/consent", nil)
		req.Header.Set("Authorization", replay)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("use %d of one NIP-98 event: %d, want %d", i+1, resp.StatusCode, want)
		}
	}
	if status, _ := call("", "GET", "/api/consent", ""); status != 401 {
		t.Errorf("no authorization: %d, want 401", status)
	}
	if got, _ := c.Get(ctx, theirs.ID); got.Status != consent.StatusPending {
		t.Errorf("the other owner's request is %s, want pending", got.Status)
	}
}

// nip98 is a NIP-98 header for method and url signed by sk. A nonce tag
// makes two calls of the same second two events (the same event again is
// a replay).
func nip98(t *testing.T, sk, method, url string) string {
	t.Helper()
	evt := nostr.Event{Kind: 27235, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"u", url}, {"method", method}, {"nonce", nostr.GeneratePrivateKey()[:16]}}}
	if err := evt.Sign(sk); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(evt)
	return "Nostr " + base64.StdEncoding.EncodeToString(raw)
}
