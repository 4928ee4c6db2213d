package main

import (
	"context"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
)

// TestTeam_listedAndInstalled: a kind-34199 team of two definitions is
// listed by def list --teams and installed whole by agent install --team,
// the first member named the default.
func TestTeam_listedAndInstalled(t *testing.T) {
	n := openAgentNode(t)
	sk := nostr.GeneratePrivateKey()
	lead := n.publishDefinition(t, sk, "--title", "Lead", "--role", "coordinates")
	helper := n.publishDefinition(t, sk, "--title", "Helper", "--role", "helps")
	team := events.Team{Slug: "duo", Title: "Duo", Members: []events.EventRef{{ID: lead.ID}, {ID: helper.ID}}}
	evt := signed(t, sk, team.Template())
	if err := n.relay.Publish(context.Background(), evt); err != nil {
		t.Fatal(err)
	}

	var listed []teamView
	decodeJSON(t, n.run(t, sk, "def", "list", "--teams", "--json"), &listed)
	if len(listed) != 1 || listed[0].Title != "Duo" || len(listed[0].Members) != 2 || listed[0].Members[0] != lead.ID {
		t.Fatalf("def list --teams: %+v", listed)
	}

	owner, _ := nostr.GetPublicKey(nostr.GeneratePrivateKey())
	var got teamInstalled
	decodeJSON(t, n.run(t, sk, "agent", "install", "--team", listed[0].Naddr, "--owner", owner, "--json"), &got)
	if len(got.Agents) != 2 || got.Agents[0].Agent.DefinitionID != lead.ID || got.Agents[1].Agent.DefinitionID != helper.ID {
		t.Fatalf("agent install --team: %+v", got)
	}
	if got.Default != got.Agents[0].Npub {
		t.Fatalf("default %s, want the first member's agent %s", got.Default, got.Agents[0].Npub)
	}
	if agents := n.d.List(); len(agents) != 2 {
		t.Fatalf("%d agents installed, want 2", len(agents))
	}
	if r := cli(t, n.env(sk), "agent", "install", "--team", "nevent1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq", "--owner", owner); r.err == nil {
		t.Fatal("agent install --team with a malformed reference succeeded")
	}
}
