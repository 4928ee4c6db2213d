package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/relay"
)

// storedClaims returns the owner's claims as the relay holds them (exactly one version).
func storedClaims(t *testing.T, n *testNode, owner string) *nostr.Event {
	t.Helper()
	evts := n.query(t, nostr.Filter{Kinds: []int{events.KindOwnerClaims}, Authors: []string{owner}})
	if len(evts) != 1 {
		t.Fatalf("relay holds %d claims events for the owner, want 1", len(evts))
	}
	return evts[0]
}

// claim runs claim add|remove with the owner key from the environment.
func claim(t *testing.T, n *testNode, ownerSK, op string, agents ...string) result {
	t.Helper()
	env := map[string]string{"AGENTNODE_RELAY": n.URL, "AGENTNODE_OWNER_KEY": ownerSK}
	return cli(t, env, append([]string{"claim", op}, agents...)...)
}

func TestClaimAdd_MergesAndKeepsUnknownTags(t *testing.T) {
	n := openTestNode(t, relay.Limits{})
	ownerKey := testkit.NewKey(t)
	ownerSK, ownerPK := ownerKey.SK, ownerKey.PK
	unknown := testkit.NewKey(t).PK
	agent1 := testkit.NewKey(t).PK
	agent2 := testkit.NewKey(t).PK

	// another tool published claims first, with an agent and a tag this CLI does not know
	earlier := signed(t, ownerSK, nostr.Event{Kind: events.KindOwnerClaims,
		Tags: nostr.Tags{{"p", unknown}, {"client", "other-tool"}}, CreatedAt: nostr.Now() - 60})
	n.publishDirect(t, earlier)

	if r := claim(t, n, ownerSK, "add", npub(agent1)); r.err != nil {
		t.Fatalf("claim add: %v\n%s", r.err, r.stderr)
	}
	if r := claim(t, n, ownerSK, "add", agent2); r.err != nil { // hex works too
		t.Fatalf("claim add: %v\n%s", r.err, r.stderr)
	}
	got := storedClaims(t, n, ownerPK)
	if agents := tagValues(got, "p"); !slices.Equal(agents, []string{unknown, agent1, agent2}) {
		t.Fatalf("p tags = %v, want [unknown agent1 agent2]", agents)
	}
	if client := tagValues(got, "client"); !slices.Equal(client, []string{"other-tool"}) {
		t.Fatalf("the other tool's tag was dropped: %v", got.Tags)
	}

	r := claim(t, n, ownerSK, "add", agent2)
	if r.err != nil || !strings.Contains(r.stderr, "nothing to change") {
		t.Fatalf("claiming an agent twice: err %v, stderr %q", r.err, r.stderr)
	}
	if again := storedClaims(t, n, ownerPK); again.ID != got.ID {
		t.Fatal("a no-op claim published a new version")
	}
}

func TestClaimRemove(t *testing.T) {
	n := openTestNode(t, relay.Limits{})
	ownerKey := testkit.NewKey(t)
	ownerSK, ownerPK := ownerKey.SK, ownerKey.PK
	agent1 := testkit.NewKey(t).PK
	agent2 := testkit.NewKey(t).PK
	if r := claim(t, n, ownerSK, "add", agent1, agent2); r.err != nil {
		t.Fatal(r.err)
	}
	r := claim(t, n, ownerSK, "remove", npub(agent1))
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !strings.Contains(r.stdout, "claims 1 agent(s)") || !strings.Contains(r.stdout, npub(agent2)) {
		t.Errorf("claim remove output:\n%s", r.stdout)
	}
	if agents := tagValues(storedClaims(t, n, ownerPK), "p"); !slices.Equal(agents, []string{agent2}) {
		t.Fatalf("after remove: p tags = %v, want [agent2]", agents)
	}
}

func TestClaim_OwnerKeyRequiredAndUsed(t *testing.T) {
	n := openTestNode(t, relay.Limits{})
	agent := testkit.NewKey(t).PK
	r := claim(t, n, "", "add", agent)
	if r.err == nil || !strings.Contains(r.err.Error(), "AGENTNODE_OWNER_KEY") || !strings.Contains(r.err.Error(), "--owner-key") {
		t.Fatalf("err = %v, want one naming --owner-key and AGENTNODE_OWNER_KEY", r.err)
	}
	ownerKey := testkit.NewKey(t)
	ownerSK, ownerPK := ownerKey.SK, ownerKey.PK
	out := n.run(t, "", "claim", "add", agent, "--owner-key", ownerSK, "--json")
	evt := publishedEvent(t, out)
	if evt.PubKey != ownerPK || evt.Kind != events.KindOwnerClaims {
		t.Fatalf("claims signed by %s (kind %d), want the owner %s", evt.PubKey, evt.Kind, ownerPK)
	}
	if r := claim(t, n, ownerSK, "add", "npub1notakey"); r.err == nil || exitCode(r.err) != 2 {
		t.Fatalf("bad agent argument: err = %v, want a usage error", r.err)
	}
}
