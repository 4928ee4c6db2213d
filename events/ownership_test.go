package events_test

import (
	"strings"
	"testing"

	"github.com/agentnode/agentnode/events"
	"github.com/nbd-wtf/go-nostr"
)

func TestCheckOwnership(t *testing.T) {
	agent, owner, other := hexID(1), hexID(2), hexID(3)
	profile := func(signer, claimed string) *events.Profile {
		return &events.Profile{PubKey: signer, Bot: true, Owner: claimed}
	}
	claims := func(signer string, agents ...string) *events.OwnerClaims {
		return &events.OwnerClaims{PubKey: signer, Agents: agents}
	}
	tests := []struct {
		name                 string
		profile              *events.Profile
		claims               *events.OwnerClaims
		wantOwner            string
		agentSide, ownerSide bool
		wantReason           string
	}{
		{"both sides: verified", profile(agent, owner), claims(owner, other, agent),
			owner, true, true, ""},
		{"agent claims, owner does not list it", profile(agent, owner), claims(owner, other),
			owner, true, false, "the owner's claims (kind 14199) do not list the agent"},
		{"owner lists it, agent names no owner", profile(agent, ""), claims(owner, agent),
			owner, false, true, `the agent's profile (kind 0) names no owner ("p")`},
		{"neither", nil, nil,
			"", false, false, "no agent profile (kind 0); no owner claims (kind 14199)"},
		{"claims signed by someone else", profile(agent, owner), claims(other, agent),
			owner, true, false, "the owner claims (kind 14199) are not signed by the owner the agent names"},
		{"profile signed by someone else", profile(other, owner), claims(owner, agent),
			owner, false, true, "the profile (kind 0) is not signed by the agent"},
		{"agent claims, no claims at all", profile(agent, owner), nil,
			owner, true, false, "no owner claims (kind 14199)"},
	}
	doc := kindsDoc(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for part := range strings.SplitSeq(tt.wantReason, "; ") {
				if part != "" && !strings.Contains(doc, "`"+part+"`") {
					t.Errorf("docs/KINDS.md does not spell out %q", part)
				}
			}
			got := events.CheckOwnership(agent, tt.profile, tt.claims)
			want := events.Ownership{Agent: agent, Owner: tt.wantOwner, Verified: tt.agentSide && tt.ownerSide,
				AgentClaimsOwner: tt.agentSide, OwnerClaimsAgent: tt.ownerSide, Reason: tt.wantReason}
			if got != want {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestSupersedes(t *testing.T) {
	older := &nostr.Event{CreatedAt: 1, ID: "b"}
	newer := &nostr.Event{CreatedAt: 2, ID: "c"}
	tieLow := &nostr.Event{CreatedAt: 2, ID: "a"}
	if !events.Supersedes(newer, older) || events.Supersedes(older, newer) {
		t.Error("the later created_at must win")
	}
	if !events.Supersedes(tieLow, newer) || events.Supersedes(newer, tieLow) {
		t.Error("on a tie the lower id must win")
	}
}
