package events

import (
	"fmt"
	"maps"
	"slices"
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

// OwnerCheck is what was seen for one candidate owner of an agent: a pubkey
// the agent's profile names with "p", or one whose kind 14199 lists the agent.
type OwnerCheck struct {
	Owner        string `json:"owner"`
	NamedByAgent bool   `json:"named_by_agent"` // a "p" of the agent's profile
	HasClaims    bool   `json:"has_claims"`     // it has published a kind 14199
	ListsAgent   bool   `json:"lists_agent"`    // that kind 14199 lists the agent
}

// Seen is everything an ownership answer looked at, so that a refusal says
// exactly what was there rather than "unverified" alone.
type Seen struct {
	Profile    bool         `json:"profile"`          // the agent has a kind 0 signed by itself
	Bot        bool         `json:"bot"`              // that kind 0 carries ["bot"]
	ProfileP   []string     `json:"profile_p"`        // every 64-hex "p" of that kind 0
	Candidates []OwnerCheck `json:"candidates"`       // every pubkey checked, profile "p"s first
	Failed     string       `json:"failed,omitempty"` // "agent->owner", "owner->agent" or "both"
}

// Failed directions of the owner link.
const (
	FailedAgentToOwner = "agent->owner" // the agent's profile does not name the owner
	FailedOwnerToAgent = "owner->agent" // the owner's kind 14199 does not list the agent
	FailedBoth         = "both"
)

// CheckOwnershipAmong is CheckOwnership over every "p" of the agent's profile
// (older TENEX profiles name each whitelisted pubkey; NIP-AE does not say
// there is one) and every claims event given (the newest kind 14199 of each
// author: of the pubkeys the profile names, and of any that list the agent).
// The agent is verified when any named pubkey's claims list it; that pubkey
// is the owner. Otherwise the owner reported is the first named pubkey with
// claims, else the first named, else the first claimant listing the agent.
func CheckOwnershipAmong(agent string, profile *Profile, claims []*OwnerClaims) (Ownership, Seen) {
	byAuthor := map[string]*OwnerClaims{}
	for _, c := range claims {
		if c != nil && byAuthor[c.PubKey] == nil {
			byAuthor[c.PubKey] = c
		}
	}
	seen := seenOf(agent, profile, byAuthor)
	best := bestCandidate(seen.Candidates)
	var prof *Profile
	if profile != nil {
		p := *profile
		if best != nil && best.NamedByAgent {
			p.Owner = best.Owner
		}
		prof = &p
	}
	var c *OwnerClaims
	if best != nil {
		c = byAuthor[best.Owner]
	}
	o := CheckOwnership(agent, prof, c)
	if !o.Verified {
		seen.Failed = failedDirection(o)
		if len(seen.ProfileP) > 1 {
			o.Reason += fmt.Sprintf("; none of the %d pubkeys the profile names with \"p\" lists the agent in a kind 14199", len(seen.ProfileP))
		}
	}
	return o, seen
}

// seenOf lists the profile's facts and every candidate owner.
func seenOf(agent string, profile *Profile, byAuthor map[string]*OwnerClaims) Seen {
	s := Seen{Candidates: []OwnerCheck{}, ProfileP: []string{}}
	named := map[string]bool{}
	if profile != nil && profile.PubKey == agent {
		s.Profile, s.Bot, s.ProfileP = true, profile.Bot, append(s.ProfileP, profile.Owners...)
		if len(profile.Owners) == 0 && profile.Owner != "" {
			s.ProfileP = append(s.ProfileP, profile.Owner)
		}
	}
	for _, p := range s.ProfileP {
		named[p] = true
		c := byAuthor[p]
		s.Candidates = append(s.Candidates, OwnerCheck{Owner: p, NamedByAgent: true, HasClaims: c != nil, ListsAgent: c != nil && c.Lists(agent)})
	}
	for _, author := range slices.Sorted(maps.Keys(byAuthor)) {
		if c := byAuthor[author]; !named[author] && c.Lists(agent) {
			s.Candidates = append(s.Candidates, OwnerCheck{Owner: author, HasClaims: true, ListsAgent: true})
		}
	}
	return s
}

// bestCandidate picks the owner to report (see CheckOwnershipAmong).
func bestCandidate(cands []OwnerCheck) *OwnerCheck {
	for _, want := range []func(OwnerCheck) bool{
		func(c OwnerCheck) bool { return c.NamedByAgent && c.ListsAgent },
		func(c OwnerCheck) bool { return c.NamedByAgent && c.HasClaims },
		func(c OwnerCheck) bool { return c.NamedByAgent },
		func(c OwnerCheck) bool { return c.ListsAgent },
	} {
		for i := range cands {
			if want(cands[i]) {
				return &cands[i]
			}
		}
	}
	return nil
}

// failedDirection names the missing half (or halves) of an unverified link.
func failedDirection(o Ownership) string {
	switch {
	case !o.AgentClaimsOwner && !o.OwnerClaimsAgent:
		return FailedBoth
	case !o.AgentClaimsOwner:
		return FailedAgentToOwner
	case !o.OwnerClaimsAgent:
		return FailedOwnerToAgent
	}
	return ""
}
