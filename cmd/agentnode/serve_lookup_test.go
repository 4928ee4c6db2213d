package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/internal/testkit"
)

// Issue 23: shared state replicates between two nodes whose agents'
// profiles live only where the agents do (TestServe_StateReplicatesBetweenNodes
// copies each profile to both relays by hand). B follows A, A follows no
// one: B's directory finds A's agent's profile by lookup on its peer.
func TestServe_StateReplicatesWithProfilesOnlyWhereTheirAgentsLive(t *testing.T) {
	a := startServe(t)
	b := startServe(t, "--peer", "ws://"+a.Addr())
	ctx := context.Background()
	authorSK := testkit.NewKey(t).SK
	ownerKey := testkit.NewKey(t)
	def := a.publish(t, authorSK, nostr.Event{Kind: 4199, Tags: nostr.Tags{{"title", "Scribe"}, {"role", "keeps notes"}}})
	b.publish(t, authorSK, nostr.Event{Kind: 4199, Tags: def.Tags, CreatedAt: def.CreatedAt})
	install := func(n *servedNode) string {
		inst, err := n.Daemon().Install(ctx, agentd.InstallRequest{Definition: def.ID, Owner: ownerKey.PK})
		if err != nil {
			t.Fatal(err)
		}
		return inst.Agent.PubKey
	}
	agentA, agentB := install(a), install(b)
	claims := signed(t, ownerKey.SK, nostr.Event{Kind: 14199, Tags: nostr.Tags{{"p", agentA}, {"p", agentB}}})
	for _, n := range []*servedNode{a, b} {
		if err := n.relay.Publish(ctx, claims); err != nil {
			t.Fatal(err)
		}
		if _, err := n.State().Register(ctx, serveTeamCap, []byte(serveTeamSchema)); err != nil {
			t.Fatal(err)
		}
	}
	testkit.WaitFor(t, 10*time.Second, "a replicator per node", func() bool {
		return a.Replicators()[agentA] != nil && b.Replicators()[agentB] != nil
	})
	testkit.WaitFor(t, 20*time.Second, "each node verifies both agents", func() bool {
		for _, n := range []*servedNode{a, b} {
			if got, err := n.verifiedAgents(ctx, ownerKey.PK); err != nil || len(got) != 2 {
				return false
			}
		}
		return true
	})
	ca := state.Caller{Agent: agentA, Owner: ownerKey.PK, Capability: serveTeamCap, Scope: "sc:test", Verbs: state.AllVerbs}
	cb := state.Caller{Agent: agentB, Owner: ownerKey.PK, Capability: serveTeamCap, Scope: "sc:test", Verbs: state.AllVerbs}
	note, _ := json.Marshal(map[string]any{"id": serveTeamID, "title": "draft", "body": "The quick fox.", "tags": []string{"x"},
		"createdAt": "2025-05-15T10:00:00Z", "updatedAt": "2025-05-15T10:00:00Z"})
	if _, err := a.State().Create(ctx, ca, serveTeamURI, note); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 30*time.Second, "the note created on A to reach B", func() bool { return stateDoc(t, b, cb) != nil })
	if _, err := b.State().Update(ctx, cb, serveTeamURI, serveTeamID, []byte(`[{"op":"replace","path":"/title","value":"from b"}]`)); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 30*time.Second, "B's edit to reach A", func() bool {
		d := stateDoc(t, a, ca)
		return d != nil && d["title"] == "from b"
	})
}

// The late joiner: documents are created on A before B (which
// follows A) exists; alice's profile lives only on A. B ends with all 3.
// They come by anti-entropy: a digest that reaches a node before the
// owner's new claims do is ignored there, and the next one follows an
// interval later, so both nodes send digests every second
// ("state": {"anti_entropy_seconds": 1}) instead of every minute, which
// the test's deadline once missed on a quiet machine.
func TestServe_LateJoinerConvergesWithProfilesOnlyWhereTheirAgentsLive(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "serve.json")
	if err := os.WriteFile(cfg, []byte(`{"state": {"anti_entropy_seconds": 1}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	a := startServe(t, "--config", cfg)
	ctx := context.Background()
	authorSK := testkit.NewKey(t).SK
	ownerKey := testkit.NewKey(t)
	def := a.publish(t, authorSK, nostr.Event{Kind: 4199, Tags: nostr.Tags{{"title", "Scribe"}, {"role", "keeps notes"}}})
	instA, err := a.Daemon().Install(ctx, agentd.InstallRequest{Definition: def.ID, Owner: ownerKey.PK})
	if err != nil {
		t.Fatal(err)
	}
	alice := instA.Agent.PubKey
	if _, err := a.State().Register(ctx, serveTeamCap, []byte(serveTeamSchema)); err != nil {
		t.Fatal(err)
	}
	if err := a.relay.Publish(ctx, signed(t, ownerKey.SK, nostr.Event{Kind: 14199, Tags: nostr.Tags{{"p", alice}}})); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 10*time.Second, "alice's replicator", func() bool { return a.Replicators()[alice] != nil })
	ca := state.Caller{Agent: alice, Owner: ownerKey.PK, Capability: serveTeamCap, Scope: "sc:test", Verbs: state.AllVerbs}
	ids := []string{"11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222", "33333333-3333-4333-8333-333333333333"}
	for _, id := range ids {
		doc, _ := json.Marshal(map[string]any{"id": id, "title": "made before B", "body": "b", "tags": []string{"x"},
			"createdAt": "2025-05-15T10:00:00Z", "updatedAt": "2025-05-15T10:00:00Z"})
		if _, err := a.State().Create(ctx, ca, serveTeamURI, doc); err != nil {
			t.Fatal(err)
		}
	}

	b := startServe(t, "--config", cfg, "--peer", "ws://"+a.Addr())
	b.publish(t, authorSK, nostr.Event{Kind: 4199, Tags: def.Tags, CreatedAt: def.CreatedAt})
	if _, err := b.State().Register(ctx, serveTeamCap, []byte(serveTeamSchema)); err != nil {
		t.Fatal(err)
	}
	instB, err := b.Daemon().Install(ctx, agentd.InstallRequest{Definition: def.ID, Owner: ownerKey.PK})
	if err != nil {
		t.Fatal(err)
	}
	carol := instB.Agent.PubKey
	claims := signed(t, ownerKey.SK, nostr.Event{Kind: 14199, Tags: nostr.Tags{{"p", alice}, {"p", carol}}, CreatedAt: nostr.Now() + 1})
	for _, n := range []*servedNode{a, b} {
		if err := n.relay.Publish(ctx, claims); err != nil {
			t.Fatal(err)
		}
	}
	cb := state.Caller{Agent: carol, Owner: ownerKey.PK, Capability: serveTeamCap, Scope: "sc:test", Verbs: state.AllVerbs}
	testkit.WaitFor(t, 60*time.Second, "the 3 documents made before B to reach B", func() bool {
		for _, id := range ids {
			d, err := b.State().Get(ctx, cb, serveTeamURI, id)
			if err != nil || d == nil {
				return false
			}
		}
		return true
	})
}
