package relay

import (
	"context"
	"fmt"

	"github.com/agentnode/agentnode/events"
	"github.com/nbd-wtf/go-nostr"
)

// Querier reads events from a store: the local relay, or a remote relay
// through an adapter.
type Querier interface {
	QuerySync(ctx context.Context, filter nostr.Filter) ([]*nostr.Event, error)
}

var _ Querier = (*Relay)(nil)

// Verification is the answer to "is this agent really its owner's?": the
// pure verdict of events.CheckOwnershipAmong, what it saw, and the events
// it was drawn from.
type Verification struct {
	events.Ownership
	Seen   events.Seen        `json:"seen"`
	Events VerificationEvents `json:"events"`
	// Sources says where each of Events came from, by event id: "local"
	// (the node's store) or the relay a lookup fetched it from
	// (verify_sources.go).
	Sources map[string]string `json:"sources,omitempty"`
}

// VerificationEvents are the two events a verdict rests on (nil when absent).
type VerificationEvents struct {
	Profile *nostr.Event `json:"profile"`
	Claims  *nostr.Event `json:"claims"`
}

// VerifyAgent checks the two-way owner link of agent (hex pubkey): the
// agent's latest kind 0 must name the owner with "p" and the owner's latest
// kind 14199 must name the agent. Every "p" of the profile is a candidate
// owner; the claims of each, and any claims listing the agent, are read and
// reported in Seen (a claimant the profile does not name never verifies).
func VerifyAgent(ctx context.Context, q Querier, agent string) (Verification, error) {
	v := Verification{}
	profEvt, err := latest(ctx, q, nostr.Filter{Kinds: []int{events.KindProfile}, Authors: []string{agent}})
	if err != nil {
		return v, err
	}
	var prof *events.Profile
	if profEvt != nil {
		prof, _ = events.ParseProfile(profEvt) // a malformed profile claims nothing
	}
	claimEvts, err := candidateClaims(ctx, q, agent, prof)
	if err != nil {
		return v, err
	}
	var claims []*events.OwnerClaims
	for _, e := range claimEvts {
		if c, err := events.ParseOwnerClaims(e); err == nil {
			claims = append(claims, c)
		}
	}
	v.Ownership, v.Seen = events.CheckOwnershipAmong(agent, prof, claims)
	v.Events = VerificationEvents{Profile: profEvt, Claims: claimEvts[v.Owner]}
	v.noteSources(q)
	return v, nil
}

// maxCandidates bounds the profile "p"s whose claims are read.
const maxCandidates = 100

// candidateClaims returns the newest kind 14199 of each pubkey the profile
// names and of each author whose claims list the agent, by author.
func candidateClaims(ctx context.Context, q Querier, agent string, prof *events.Profile) (map[string]*nostr.Event, error) {
	filters := []nostr.Filter{{Kinds: []int{events.KindOwnerClaims}, Tags: nostr.TagMap{"p": {agent}}, Limit: 50}}
	if prof != nil && prof.PubKey == agent && len(prof.Owners) > 0 {
		owners := prof.Owners[:min(len(prof.Owners), maxCandidates)]
		filters = append(filters, nostr.Filter{Kinds: []int{events.KindOwnerClaims}, Authors: owners, Limit: 10 * len(owners)})
	}
	out := map[string]*nostr.Event{}
	for _, f := range filters {
		evts, err := q.QuerySync(ctx, f)
		if err != nil {
			return nil, fmt.Errorf("query owner claims: %w", err)
		}
		for _, e := range evts {
			if best := out[e.PubKey]; best == nil || events.Supersedes(e, best) {
				out[e.PubKey] = e
			}
		}
	}
	return out, nil
}

// OwnerAgents lists every agent linked to owner in either direction (named
// in the owner's 14199, or naming the owner in its kind 0), each verified.
// It reads the owner's claims once and every agent's profile in one query.
func OwnerAgents(ctx context.Context, q Querier, owner string) ([]Verification, error) {
	claimsEvt, err := latest(ctx, q, nostr.Filter{Kinds: []int{events.KindOwnerClaims}, Authors: []string{owner}})
	if err != nil {
		return nil, err
	}
	var claims *events.OwnerClaims
	if claimsEvt != nil {
		claims, _ = events.ParseOwnerClaims(claimsEvt)
	}
	agents, err := ownerAgentKeys(ctx, q, owner, claims)
	if err != nil || len(agents) == 0 {
		return nil, err
	}
	profiles, err := latestProfiles(ctx, q, agents)
	if err != nil {
		return nil, err
	}
	out := make([]Verification, 0, len(agents))
	for _, agent := range agents {
		profEvt := profiles[agent]
		var prof *events.Profile
		if profEvt != nil {
			prof, _ = events.ParseProfile(profEvt)
		}
		v := Verification{Ownership: events.CheckOwnership(agent, prof, claims),
			Events: VerificationEvents{Profile: profEvt, Claims: claimsEvt}}
		_, v.Seen = events.CheckOwnershipAmong(agent, prof, []*events.OwnerClaims{claims})
		v.noteSources(q)
		if v.Owner != owner {
			v.Ownership = events.Ownership{Agent: agent, Owner: owner, OwnerClaimsAgent: claims.Lists(agent),
				Reason: "the agent's profile does not name this owner"}
		}
		out = append(out, v)
	}
	return out, nil
}

// ownerAgentKeys is every agent the owner's claims list, then every agent
// whose kind 0 names the owner, once each.
func ownerAgentKeys(ctx context.Context, q Querier, owner string, claims *events.OwnerClaims) ([]string, error) {
	seen := map[string]bool{}
	var keys []string
	add := func(k string) {
		if events.IsHex64(k) && !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	if claims != nil {
		for _, a := range claims.Agents {
			add(a)
		}
	}
	profiles, err := q.QuerySync(ctx, nostr.Filter{Kinds: []int{events.KindProfile}, Tags: nostr.TagMap{"p": {owner}}, Limit: 500})
	if err != nil {
		return nil, fmt.Errorf("query profiles naming %s: %w", owner, err)
	}
	for _, p := range profiles {
		add(p.PubKey)
	}
	return keys, nil
}

// latestProfiles returns the newest kind 0 of each agent (absent: none).
func latestProfiles(ctx context.Context, q Querier, agents []string) (map[string]*nostr.Event, error) {
	evts, err := q.QuerySync(ctx, nostr.Filter{Kinds: []int{events.KindProfile}, Authors: agents, Limit: 10 * len(agents)})
	if err != nil {
		return nil, fmt.Errorf("query profiles: %w", err)
	}
	out := make(map[string]*nostr.Event, len(agents))
	for _, e := range evts {
		if best := out[e.PubKey]; best == nil || events.Supersedes(e, best) {
			out[e.PubKey] = e
		}
	}
	return out, nil
}

// latest returns the newest event matching filter, or nil.
func latest(ctx context.Context, q Querier, filter nostr.Filter) (*nostr.Event, error) {
	filter.Limit = 10 // remote relays may hold several versions of a replaceable event
	evts, err := q.QuerySync(ctx, filter)
	if err != nil {
		return nil, fmt.Errorf("query %v: %w", filter.Kinds, err)
	}
	var best *nostr.Event
	for _, e := range evts {
		if best == nil || events.Supersedes(e, best) {
			best = e
		}
	}
	return best, nil
}
