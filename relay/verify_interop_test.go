package relay

import (
	"context"
	"slices"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
)

// TestVerifyAgent_TENEXProfiles verifies agent profiles written the way
// TENEX writes them, over /api/verify, and checks that the answer says
// exactly what it saw.
func TestVerifyAgent_TENEXProfiles(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{})
	ctx := context.Background()
	key := func() (string, string) {
		sk := nostr.GeneratePrivateKey()
		pk, _ := nostr.GetPublicKey(sk)
		return sk, pk
	}
	publish := func(sk string, kind int, tags nostr.Tags, content string) {
		t.Helper()
		if err := tr.Publish(ctx, signed(t, sk, kind, tags, content)); err != nil {
			t.Fatal(err)
		}
	}
	ownerSK, owner := key()
	_, other := key()
	_, backend := key()
	project := "31933:" + owner + ":my-project"

	tests := []struct {
		name       string
		tags       func(agent string) nostr.Tags
		claim      bool // the owner's 14199 lists the agent
		verified   bool
		bot        bool
		profileP   []string
		failed     string
		candidates int
	}{
		// tenex-chat/tenex@d48b9938 tenex/src/nostr_pub/agent_config.rs: p = backend, no bot; no 14199 any more.
		{"tenex-rs: backend p, no bot, no claims", func(string) nostr.Tags {
			return nostr.Tags{{"slug", "reviewer"}, {"p", backend}, {"backend", "laptop"}, {"model", "m"}}
		}, false, false, false, []string{backend}, events.FailedOwnerToAgent, 1},
		// tenex-chat/tenex@7763e6ef src/nostr/AgentProfilePublisher.ts: a "p" per whitelisted pubkey.
		{"tenex-ts: whitelisted p's, owner second, owner claims it", func(string) nostr.Tags {
			return nostr.Tags{{"a", project}, {"e", hexID(4)}, {"p", other}, {"p", owner}, {"bot"}, {"t", "tenex"}}
		}, true, true, true, []string{other, owner}, "", 2},
		{"tenex-ts: whitelisted p's, no claims", func(string) nostr.Tags {
			return nostr.Tags{{"p", other}, {"p", owner}, {"bot"}}
		}, false, false, true, []string{other, owner}, events.FailedOwnerToAgent, 2},
		{"no p, claimed by the owner", func(string) nostr.Tags {
			return nostr.Tags{{"bot"}, {"e", hexID(4)}}
		}, true, false, true, []string{}, events.FailedAgentToOwner, 1},
	}
	var listed []string
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			agentSK, agent := key()
			publish(agentSK, events.KindProfile, tt.tags(agent), `{"name":"reviewer"}`)
			if tt.claim {
				listed = append(listed, agent)
				tags := nostr.Tags{}
				for _, a := range listed {
					tags = append(tags, nostr.Tag{"p", a})
				}
				// a newer version each time (replaceable: same-second versions tie)
				claims := &nostr.Event{Kind: events.KindOwnerClaims, Tags: tags, CreatedAt: nostr.Now() + nostr.Timestamp(len(listed))}
				if err := claims.Sign(ownerSK); err != nil {
					t.Fatal(err)
				}
				if err := tr.Publish(ctx, claims); err != nil {
					t.Fatal(err)
				}
			}
			var v Verification
			if code := getJSON(t, tr.srv.URL+"/api/verify/"+agent, &v); code != 200 {
				t.Fatalf("status %d", code)
			}
			s := v.Seen
			if v.Verified != tt.verified || s.Bot != tt.bot || !slices.Equal(s.ProfileP, tt.profileP) ||
				s.Failed != tt.failed || len(s.Candidates) != tt.candidates || !s.Profile {
				t.Errorf("got verified %v owner %.8s reason %q seen %+v", v.Verified, v.Owner, v.Reason, s)
			}
			if tt.verified && v.Owner != owner {
				t.Errorf("owner %s, want %s", v.Owner, owner)
			}
		})
	}
}
