package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/internal/testkit"
)

// A document whose create op is far larger than one event (a 2 MB body
// that does not compress) reaches the other served node whole, in chunks.
func TestServe_LargeDocumentReplicates(t *testing.T) {
	ctx := context.Background()
	a := startServe(t)
	b := startServe(t, "--peer", "ws://"+a.Addr())
	authorSK := testkit.NewKey(t).SK
	ownerKey := testkit.NewKey(t)
	ownerSK, owner := ownerKey.SK, ownerKey.PK
	def := a.publish(t, authorSK, nostr.Event{Kind: 4199, Tags: nostr.Tags{{"title", "Scribe"}, {"role", "keeps notes"}}})
	agentA := installOn(t, a, def.ID, owner)
	if _, err := a.State().Register(ctx, serveTeamCap, []byte(serveTeamSchema)); err != nil {
		t.Fatal(err)
	}
	agentB := joinNode(t, a, b, def, authorSK, ownerSK, agentA, serveTeamCap, serveTeamSchema)
	testkit.WaitFor(t, 10*time.Second, "a replicator per node", func() bool {
		return a.Replicators()[agentA] != nil && b.Replicators()[agentB] != nil
	})
	ca := state.Caller{Agent: agentA, Owner: owner, Capability: serveTeamCap, Scope: "sc:test", Verbs: state.AllVerbs}
	cb := state.Caller{Agent: agentB, Owner: owner, Capability: serveTeamCap, Scope: "sc:test", Verbs: state.AllVerbs}
	raw := make([]byte, 1_500_000)
	rand.Read(raw)
	note, _ := json.Marshal(map[string]any{"id": serveTeamID, "title": "big", "body": base64.StdEncoding.EncodeToString(raw), "tags": []string{"x"},
		"createdAt": "2025-05-15T10:00:00Z", "updatedAt": "2025-05-15T10:00:00Z"})
	if _, err := a.State().Create(ctx, ca, serveTeamURI, note); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	testkit.WaitFor(t, 60*time.Second, "the 2 MB note identical on B", func() bool {
		d := rawDoc(b, cb, serveTeamID)
		return d != "" && d == rawDoc(a, ca, serveTeamID)
	})
	t.Logf("a %d-byte document reached the other node in %s", len(note), time.Since(start))
}
