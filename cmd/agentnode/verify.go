package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/relay"
)

// errNotVerified ends `verify <agent>` with exit code 1 when the agent's
// owner link does not verify (the answer itself is on stdout).
var errNotVerified = errors.New("verify: the agent is not verified")

const verifyUsage = `verify <agent npub|hex> [--relay URL]... [--json]
       agentnode verify --owner <owner npub|hex> [--relay URL]... [--json]

An agent is verified when its latest profile (kind 0) names the owner
with "p" and that owner's latest claims (kind 14199) list the agent.
Every --relay is queried and the answers merged.
Exit code: 0 verified, 1 not verified (or an error), 2 bad usage.
With --owner: every agent linked to the owner in either direction, each
checked; exit code 0 unless the listing itself fails.`

// runVerify: verify (see verifyUsage).
func runVerify(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("verify", verifyUsage)
	var nf netFlags
	m.addNetFlags(fs, &nf)
	ownerArg := fs.String("owner", "", "list and check every agent of this owner instead")
	asJSON := fs.Bool("json", false, "print JSON (the relay's Verification objects)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if (*ownerArg == "") == (len(pos) != 1) || len(pos) > 1 {
		return usagef("verify: give one agent, or --owner and no agent")
	}
	key, err := events.ParsePubKey(cmp.Or(*ownerArg, firstOr(pos, "")))
	if err != nil {
		return usagef("verify: %v", err)
	}
	s, err := m.dial(ctx, &nf)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	defer s.Close()
	if *ownerArg != "" {
		return m.verifyOwner(ctx, s, key, *asJSON)
	}
	return m.verifyAgent(ctx, s, key, *asJSON)
}

// firstOr returns list[0], or def when list is empty.
func firstOr(list []string, def string) string {
	if len(list) == 0 {
		return def
	}
	return list[0]
}

// verifyAgent checks one agent (hex pubkey).
func (m *Main) verifyAgent(ctx context.Context, s *session, agent string, asJSON bool) error {
	v, err := relay.VerifyAgent(ctx, s, agent)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	if asJSON {
		err = writeJSON(m.Stdout, v)
	} else {
		m.printVerification(v)
	}
	if err == nil && !v.Verified {
		err = errNotVerified
	}
	return err
}

func (m *Main) printVerification(v relay.Verification) {
	if v.Verified {
		fmt.Fprintf(m.Stdout, "verified: agent %s belongs to owner %s (its profile names the owner, the owner's claims list it)\n", npub(v.Agent), npub(v.Owner))
		return
	}
	owner := "no owner named"
	if v.Owner != "" {
		owner = "owner " + npub(v.Owner)
	}
	fmt.Fprintf(m.Stdout, "not verified: agent %s, %s (agent names owner: %s, owner lists agent: %s)\n",
		npub(v.Agent), owner, yesNo(v.AgentClaimsOwner), yesNo(v.OwnerClaimsAgent))
	fmt.Fprintf(m.Stdout, "reason: %s\n", v.Reason)
	m.printSeen(v.Seen)
}

// printSeen says what the verification looked at: the profile, its bot
// tag, every "p" and, per candidate owner, its claims.
func (m *Main) printSeen(s events.Seen) {
	if !s.Profile {
		fmt.Fprintln(m.Stdout, "seen: no profile (kind 0) signed by the agent")
	} else {
		fmt.Fprintf(m.Stdout, "seen: profile (kind 0), bot tag: %s, p tags: %d\n", yesNo(s.Bot), len(s.ProfileP))
	}
	for _, c := range s.Candidates {
		claims := "no claims (kind 14199)"
		if c.HasClaims {
			claims = "claims (kind 14199) list the agent: " + yesNo(c.ListsAgent)
		}
		fmt.Fprintf(m.Stdout, "  %s named by the agent: %s, %s\n", npub(c.Owner), yesNo(c.NamedByAgent), claims)
	}
	if s.Failed != "" {
		fmt.Fprintf(m.Stdout, "failed direction: %s\n", s.Failed)
	}
}

// ownerAgentsView is verify --owner's JSON, the shape of the relay's
// GET /api/owners/{owner}/agents.
type ownerAgentsView struct {
	Owner  string               `json:"owner"`
	Agents []relay.Verification `json:"agents"`
}

// verifyOwner lists and checks every agent linked to owner (hex pubkey).
func (m *Main) verifyOwner(ctx context.Context, s *session, owner string, asJSON bool) error {
	list, err := relay.OwnerAgents(ctx, s, owner)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	if asJSON {
		return writeJSON(m.Stdout, ownerAgentsView{Owner: owner, Agents: nonNil(list)})
	}
	if len(list) == 0 {
		fmt.Fprintf(m.Stdout, "no agents linked to owner %s\n", npub(owner))
		return nil
	}
	t := newTable(m.Stdout)
	fmt.Fprintln(t, "AGENT\tVERIFIED\tMISSING")
	for _, v := range list {
		fmt.Fprintf(t, "%s\t%s\t%s\n", npub(v.Agent), yesNo(v.Verified), missingSide(v.Ownership))
	}
	return t.Flush()
}

// missingSide names the half of the owner link that is absent.
func missingSide(o events.Ownership) string {
	switch {
	case !o.AgentClaimsOwner && !o.OwnerClaimsAgent:
		return "both: agent profile p and owner claims p"
	case !o.AgentClaimsOwner:
		return "agent profile (kind 0) does not name this owner"
	case !o.OwnerClaimsAgent:
		return "owner claims (kind 14199) do not list the agent"
	}
	return "-"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
