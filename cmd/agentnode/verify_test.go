package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/relay"
)

// publishDirectProfile stores an agent profile (kind 0, ["bot"]) naming owner
// ("" for none), signed by the agent.
func publishDirectProfile(t *testing.T, n *testNode, agentSK, owner string) *nostr.Event {
	t.Helper()
	p := events.Profile{Bot: true, Owner: owner, Name: "test agent"}
	evt := signed(t, agentSK, p.Template())
	n.publishDirect(t, evt)
	return evt
}

func verifyJSON(t *testing.T, n *testNode, args ...string) (relay.Verification, error) {
	t.Helper()
	r := n.try(t, "", append([]string{"verify", "--json"}, args...)...)
	var v relay.Verification
	decodeJSON(t, r.stdout, &v)
	return v, r.err
}

func TestVerify_BothSides(t *testing.T) {
	n := openTestNode(t, relay.Limits{})
	ownerKey := testkit.NewKey(t)
	ownerSK, ownerPK := ownerKey.SK, ownerKey.PK
	agentKey := testkit.NewKey(t)
	agentSK, agentPK := agentKey.SK, agentKey.PK
	profile := publishDirectProfile(t, n, agentSK, ownerPK)
	if r := claim(t, n, ownerSK, "add", agentPK); r.err != nil {
		t.Fatal(r.err)
	}

	v, err := verifyJSON(t, n, npub(agentPK))
	if err != nil {
		t.Fatalf("verify of a verified agent failed: %v", err)
	}
	if !v.Verified || !v.AgentClaimsOwner || !v.OwnerClaimsAgent || v.Owner != ownerPK || v.Agent != agentPK || v.Reason != "" {
		t.Fatalf("verification = %+v", v.Ownership)
	}
	if v.Events.Profile == nil || v.Events.Profile.ID != profile.ID || v.Events.Claims == nil || v.Events.Claims.PubKey != ownerPK {
		t.Fatalf("verification events = %+v", v.Events)
	}

	r := n.try(t, "", "verify", agentPK)
	if r.err != nil || !strings.HasPrefix(r.stdout, "verified: agent "+npub(agentPK)) {
		t.Fatalf("human verify: err %v, out %q", r.err, r.stdout)
	}
}

func TestVerify_JSONFieldNames(t *testing.T) {
	n := openTestNode(t, relay.Limits{})
	ownerKey := testkit.NewKey(t)
	ownerSK, ownerPK := ownerKey.SK, ownerKey.PK
	agentKey := testkit.NewKey(t)
	agentSK, agentPK := agentKey.SK, agentKey.PK
	publishDirectProfile(t, n, agentSK, ownerPK)
	claim(t, n, ownerSK, "add", agentPK)
	out := n.run(t, "", "verify", "--json", agentPK)
	var raw map[string]any
	decodeJSON(t, out, &raw)
	for _, k := range []string{"verified", "agent_claims_owner", "owner_claims_agent", "owner", "agent", "events"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("verify --json lacks %q: %s", k, out)
		}
	}
	evts, _ := raw["events"].(map[string]any)
	if _, ok := evts["profile"]; !ok {
		t.Errorf("events lacks profile: %s", out)
	}
	if _, ok := evts["claims"]; !ok {
		t.Errorf("events lacks claims: %s", out)
	}
}

func TestVerify_OwnerDoesNotClaimAgent(t *testing.T) {
	n := openTestNode(t, relay.Limits{})
	ownerKey := testkit.NewKey(t)
	ownerSK, ownerPK := ownerKey.SK, ownerKey.PK
	agentKey := testkit.NewKey(t)
	agentSK, agentPK := agentKey.SK, agentKey.PK
	otherAgent := testkit.NewKey(t).PK
	publishDirectProfile(t, n, agentSK, ownerPK)
	claim(t, n, ownerSK, "add", otherAgent)

	v, err := verifyJSON(t, n, agentPK)
	if !errors.Is(err, errNotVerified) || exitCode(err) != 1 {
		t.Fatalf("err = %v, want errNotVerified (exit 1)", err)
	}
	if v.Verified || !v.AgentClaimsOwner || v.OwnerClaimsAgent || !strings.Contains(v.Reason, "do not list the agent") {
		t.Fatalf("verification = %+v", v.Ownership)
	}
	r := n.try(t, "", "verify", npub(agentPK))
	if !strings.HasPrefix(r.stdout, "not verified") || !strings.Contains(r.stdout, "reason: ") {
		t.Fatalf("human output:\n%s", r.stdout)
	}
	// The answer says what it saw: the profile, its p, the owner's claims, the direction.
	for _, want := range []string{"seen: profile (kind 0), bot tag: yes, p tags: 1", npub(ownerPK) + " named by the agent: yes, claims (kind 14199) list the agent: no", "failed direction: owner->agent"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("human output lacks %q:\n%s", want, r.stdout)
		}
	}
	if v.Seen.Failed != events.FailedOwnerToAgent || len(v.Seen.Candidates) != 1 {
		t.Errorf("seen = %+v", v.Seen)
	}
}

func TestVerify_AgentDoesNotNameOwner(t *testing.T) {
	n := openTestNode(t, relay.Limits{})
	ownerKey := testkit.NewKey(t)
	ownerSK, ownerPK := ownerKey.SK, ownerKey.PK
	agentKey := testkit.NewKey(t)
	agentSK, agentPK := agentKey.SK, agentKey.PK
	publishDirectProfile(t, n, agentSK, "")
	claim(t, n, ownerSK, "add", agentPK)

	v, err := verifyJSON(t, n, agentPK)
	if !errors.Is(err, errNotVerified) {
		t.Fatalf("err = %v, want errNotVerified", err)
	}
	if v.Verified || v.AgentClaimsOwner || !strings.Contains(v.Reason, "names no owner") {
		t.Fatalf("verification = %+v", v.Ownership)
	}

	// seen from the owner's side, the claim is there and the profile half is missing
	var list ownerAgentsView
	decodeJSON(t, n.run(t, "", "verify", "--owner", npub(ownerPK), "--json"), &list)
	if len(list.Agents) != 1 || list.Agents[0].Agent != agentPK || list.Agents[0].Verified ||
		!list.Agents[0].OwnerClaimsAgent || list.Agents[0].AgentClaimsOwner {
		t.Fatalf("verify --owner = %+v", list)
	}
}

func TestVerify_OwnerTable(t *testing.T) {
	n := openTestNode(t, relay.Limits{})
	ownerKey := testkit.NewKey(t)
	ownerSK, ownerPK := ownerKey.SK, ownerKey.PK
	goodKey := testkit.NewKey(t)
	goodSK, good := goodKey.SK, goodKey.PK
	lazyKey := testkit.NewKey(t)
	lazySK, lazy := lazyKey.SK, lazyKey.PK // names the owner, not claimed
	anonKey := testkit.NewKey(t)
	anonSK, anon := anonKey.SK, anonKey.PK // claimed, its profile names nobody
	noProfile := testkit.NewKey(t).PK      // claimed, no profile at all
	publishDirectProfile(t, n, goodSK, ownerPK)
	publishDirectProfile(t, n, lazySK, ownerPK)
	publishDirectProfile(t, n, anonSK, "")
	claim(t, n, ownerSK, "add", good, anon, noProfile)

	out := n.run(t, "", "verify", "--owner", ownerPK)
	lines := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			lines[f[0]] = line
		}
	}
	if _, ok := lines["AGENT"]; !ok {
		t.Fatalf("no header:\n%s", out)
	}
	check := func(agent, verified, missing string) {
		t.Helper()
		line := lines[npub(agent)]
		if !strings.Contains(line, verified) || !strings.Contains(line, missing) {
			t.Errorf("row for %s = %q, want %q and %q\n%s", npub(agent), line, verified, missing, out)
		}
	}
	check(good, "yes", "-")
	check(lazy, "no", "owner claims (kind 14199) do not list the agent")
	check(anon, "no", "agent profile (kind 0) does not name this owner")
	check(noProfile, "no", "agent profile (kind 0) does not name this owner")
}

func TestVerify_MergesRelays(t *testing.T) {
	a := openTestNode(t, relay.Limits{})
	b := openTestNode(t, relay.Limits{})
	ownerKey := testkit.NewKey(t)
	ownerSK, ownerPK := ownerKey.SK, ownerKey.PK
	agentKey := testkit.NewKey(t)
	agentSK, agentPK := agentKey.SK, agentKey.PK
	publishDirectProfile(t, a, agentSK, ownerPK)                                                        // profile only on a
	b.publishDirect(t, signed(t, ownerSK, (&events.OwnerClaims{Agents: []string{agentPK}}).Template())) // claims only on b

	one := cli(t, nil, "verify", "--relay", a.URL, agentPK)
	if !errors.Is(one.err, errNotVerified) {
		t.Fatalf("with relay a alone: err = %v, want not verified", one.err)
	}
	both := cli(t, nil, "verify", "--relay", a.URL, "--relay", b.URL, agentPK)
	if both.err != nil {
		t.Fatalf("with both relays: %v\n%s", both.err, both.stdout)
	}
}

func TestVerify_Usage(t *testing.T) {
	n := openTestNode(t, relay.Limits{})
	pk := testkit.NewKey(t).PK
	for _, args := range [][]string{{"verify"}, {"verify", pk, "--owner", pk}, {"verify", "nope"}} {
		if r := n.try(t, "", args...); exitCode(r.err) != 2 {
			t.Errorf("%v: err = %v, want a usage error", args, r.err)
		}
	}
}
