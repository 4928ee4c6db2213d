package events

import (
	"strings"
)

// Ownership is the outcome of the NIP-AE two-way owner check for one agent.
type Ownership struct {
	Agent            string `json:"agent"`
	Owner            string `json:"owner,omitempty"`
	Verified         bool   `json:"verified"`
	AgentClaimsOwner bool   `json:"agent_claims_owner"`
	OwnerClaimsAgent bool   `json:"owner_claims_agent"`
	Reason           string `json:"reason,omitempty"` // why not verified
}

// CheckOwnership verifies an agent's owner: the agent's kind 0 (profile, signed
// by agent) must name the owner in "p", and that owner's kind 14199 (claims,
// signed by the owner) must list the agent. Either argument may be nil. The
// owner is the one the profile names, else the claims' author.
func CheckOwnership(agent string, profile *Profile, claims *OwnerClaims) Ownership {
	o := Ownership{Agent: agent, Owner: claimedOwner(agent, profile, claims)}
	o.AgentClaimsOwner = profile != nil && profile.PubKey == agent && profile.Owner != ""
	o.OwnerClaimsAgent = claims != nil && claims.PubKey == o.Owner && claims.Lists(agent)
	o.Verified = o.AgentClaimsOwner && o.OwnerClaimsAgent
	if !o.Verified {
		o.Reason = strings.Join(ownershipGaps(o, profile, claims), "; ")
	}
	return o
}

// claimedOwner is the owner named by the agent's own profile, else the claims' author.
func claimedOwner(agent string, profile *Profile, claims *OwnerClaims) string {
	if profile != nil && profile.PubKey == agent && profile.Owner != "" {
		return profile.Owner
	}
	if claims != nil {
		return claims.PubKey
	}
	return ""
}

// ownershipGaps explains each missing half of the link.
func ownershipGaps(o Ownership, profile *Profile, claims *OwnerClaims) []string {
	var gaps []string
	switch {
	case profile == nil:
		gaps = append(gaps, "no agent profile (kind 0)")
	case profile.PubKey != o.Agent:
		gaps = append(gaps, "the profile (kind 0) is not signed by the agent")
	case profile.Owner == "":
		gaps = append(gaps, `the agent's profile (kind 0) names no owner ("p")`)
	}
	switch {
	case claims == nil:
		gaps = append(gaps, "no owner claims (kind 14199)")
	case claims.PubKey != o.Owner:
		gaps = append(gaps, "the owner claims (kind 14199) are not signed by the owner the agent names")
	case !claims.Lists(o.Agent):
		gaps = append(gaps, "the owner's claims (kind 14199) do not list the agent")
	}
	return gaps
}
