package relay

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
)

func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode
}

func TestRelay_VerifyEndpoint(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{})
	ctx := context.Background()
	owner, agent, stranger := nostr.GeneratePrivateKey(), nostr.GeneratePrivateKey(), nostr.GeneratePrivateKey()
	ownerPub, _ := nostr.GetPublicKey(owner)
	agentPub, _ := nostr.GetPublicKey(agent)
	strangerPub, _ := nostr.GetPublicKey(stranger)
	def := hexID(5)
	publish := func(sk string, kind int, tags nostr.Tags, content string) {
		if err := tr.Publish(ctx, signed(t, sk, kind, tags, content)); err != nil {
			t.Fatal(err)
		}
	}
	type answer struct {
		Verified         bool   `json:"verified"`
		AgentClaimsOwner bool   `json:"agent_claims_owner"`
		OwnerClaimsAgent bool   `json:"owner_claims_agent"`
		Owner            string `json:"owner"`
		Events           struct {
			Profile *nostr.Event `json:"profile"`
			Claims  *nostr.Event `json:"claims"`
		} `json:"events"`
	}
	npub, _ := nip19.EncodePublicKey(agentPub)
	check := func(step string, wantVerified, wantAgentSide, wantOwnerSide bool) {
		t.Helper()
		var a answer
		if code := getJSON(t, tr.srv.URL+"/api/verify/"+npub, &a); code != 200 {
			t.Fatalf("%s: status %d", step, code)
		}
		if a.Verified != wantVerified || a.AgentClaimsOwner != wantAgentSide || a.OwnerClaimsAgent != wantOwnerSide {
			t.Fatalf("%s: got %+v", step, a)
		}
	}
	check("nothing published", false, false, false)
	publish(agent, 0, nostr.Tags{{"bot"}, {"e", def}, {"p", ownerPub}}, `{"name":"a"}`)
	check("agent side only", false, true, false)
	publish(stranger, 14199, nostr.Tags{{"p", agentPub}}, "") // a stranger's claim does not count
	check("stranger claims", false, true, false)
	publish(owner, 14199, nostr.Tags{{"p", strangerPub}, {"p", agentPub}}, "")
	check("both sides", true, true, true)

	var list struct {
		Agents []answer `json:"agents"`
	}
	getJSON(t, tr.srv.URL+"/api/owners/"+ownerPub+"/agents", &list)
	if len(list.Agents) != 2 {
		t.Fatalf("owner listing: %d agents, want 2", len(list.Agents))
	}
	var bad map[string]string
	if code := getJSON(t, tr.srv.URL+"/api/verify/nonsense", &bad); code != 400 || bad["error"] == "" {
		t.Fatalf("bad key: status %d %v", code, bad)
	}
}

func TestVerifyAgent_ReportsClaimantWhenAgentNamesNoOwner(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{})
	ctx := context.Background()
	owner, agent := nostr.GeneratePrivateKey(), nostr.GeneratePrivateKey()
	ownerPub, _ := nostr.GetPublicKey(owner)
	agentPub, _ := nostr.GetPublicKey(agent)
	if err := tr.Publish(ctx, signed(t, owner, 14199, nostr.Tags{{"p", agentPub}}, "")); err != nil {
		t.Fatal(err)
	}
	v, err := VerifyAgent(ctx, tr, agentPub)
	if err != nil {
		t.Fatal(err)
	}
	if v.Verified || v.AgentClaimsOwner || !v.OwnerClaimsAgent || v.Owner != ownerPub || v.Events.Claims == nil {
		t.Fatalf("got %+v", v.Ownership)
	}
}
