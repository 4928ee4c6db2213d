package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
)

const claimUsage = `claim %s <agent npub|hex>... [--owner-key NSEC | --bunker bunker://...] [--relay URL]... [--json]

The owner's latest claims (kind 14199) are fetched from every relay and
merged: every agent and tag already there is kept, even ones this tool
does not know. The result is signed with the owner's key (--owner-key or
env AGENTNODE_OWNER_KEY; never stored), or by the owner's NIP-46 remote
signer (--bunker or env AGENTNODE_OWNER_BUNKER; the key never leaves it),
and published to every relay.`

// claimArgs is claim add/remove's parsed command line.
type claimArgs struct {
	op     string // "add" or "remove"
	net    netFlags
	owner  ownerFlags
	json   bool
	agents []string
}

// runClaim: claim add|remove (see claimUsage).
func runClaim(ctx context.Context, m *Main, op string, args []string) error {
	cmd := "claim " + op
	a := &claimArgs{op: op}
	fs := m.newFlagSet(cmd, fmt.Sprintf(claimUsage, op))
	m.addNetFlags(fs, &a.net)
	addOwnerFlags(fs, &a.owner)
	fs.BoolVar(&a.json, "json", false, "print the signed event as JSON")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("%s: name at least one agent (npub or hex)", cmd)
	}
	if a.agents, err = pubkeyArgs(cmd, pos); err != nil {
		return err
	}
	signer, err := a.owner.signer(ctx, m, cmd, &a.net)
	if err != nil {
		return err
	}
	defer signer.close()
	return m.updateClaims(ctx, cmd, a, signer)
}

// updateClaims fetches, merges, signs and publishes the owner's claims.
// When the merge changes nothing, nothing is published and the stored
// claims are shown.
func (m *Main) updateClaims(ctx context.Context, cmd string, a *claimArgs, signer ownerSigner) error {
	owner, err := signer.pubkey(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	s, err := m.dial(ctx, &a.net)
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	defer s.Close()
	latest, stored, err := latestClaims(ctx, s, owner)
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	next := a.merge(latest)
	if unchanged(latest, next) {
		fmt.Fprintf(m.Stderr, "%s: nothing to change, nothing published\n", cmd)
		return m.printClaimed(owner, next.Agents, stored, a.json)
	}
	tmpl := next.Template()
	tmpl.CreatedAt = nextTimestamp(latest)
	evt, err := signer.sign(ctx, cmd, tmpl)
	if err != nil {
		return err
	}
	if err := m.publish(ctx, cmd, s, evt, a.json); err != nil || a.json {
		return err
	}
	return m.printClaimed(owner, next.Agents, nil, false)
}

// unchanged reports whether next claims exactly the agents latest does
// (no claims at all counting as claiming none).
func unchanged(latest, next *events.OwnerClaims) bool {
	if latest == nil {
		return len(next.Agents) == 0
	}
	return slices.Equal(next.Agents, latest.Agents)
}

func (a *claimArgs) merge(latest *events.OwnerClaims) *events.OwnerClaims {
	if a.op == "add" {
		return events.MergeClaims(latest, a.agents, nil)
	}
	return events.MergeClaims(latest, nil, a.agents)
}

// latestClaims returns the owner's newest claims on any relay (parsed and
// as stored), or nils. An unparseable one is an error: publishing over it
// could drop its agents.
func latestClaims(ctx context.Context, s *session, owner string) (*events.OwnerClaims, *nostr.Event, error) {
	evts, err := s.QuerySync(ctx, nostr.Filter{Kinds: []int{events.KindOwnerClaims}, Authors: []string{owner}, Limit: 10})
	if err != nil || len(evts) == 0 {
		return nil, nil, err
	}
	claims, err := events.ParseOwnerClaims(evts[0]) // newest first
	if err != nil {
		return nil, nil, fmt.Errorf("the latest claims %s cannot be read, not replacing them: %w", evts[0].ID, err)
	}
	return claims, evts[0], nil
}

// nextTimestamp is now, or one second after the latest claims when the
// clock has not moved past them: of two versions of a replaceable event
// with the same created_at, relays keep the lower id, not the newer one.
func nextTimestamp(latest *events.OwnerClaims) nostr.Timestamp {
	now := nostr.Now()
	if latest != nil && latest.CreatedAt >= now {
		return latest.CreatedAt + 1
	}
	return now
}

// printClaimed lists the agents the owner claims; with --json it prints
// the stored claims event (used when nothing was published).
func (m *Main) printClaimed(owner string, agents []string, stored *nostr.Event, asJSON bool) error {
	if asJSON {
		return writeJSON(m.Stdout, stored)
	}
	fmt.Fprintf(m.Stdout, "owner %s claims %d agent(s):\n", npub(owner), len(agents))
	for _, a := range agents {
		fmt.Fprintf(m.Stdout, "  %s\n", npub(a))
	}
	return nil
}
