package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/internal/testkit"
)

// A node that starts after N documents and M edits exist on another one —
// its agent was in no batch's readers — converges to byte-identical
// documents through anti-entropy ("state": {"anti_entropy_seconds": 1} in
// both nodes' --config), and its own later edit reaches the first node.
func TestServe_LateNodeConverges(t *testing.T) {
	const docs, edits = 10, 30
	cfg := filepath.Join(t.TempDir(), "serve.json")
	if err := os.WriteFile(cfg, []byte(`{"state": {"anti_entropy_seconds": 1, "lifecycle_seconds": 1}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a := startServe(t, "--config", cfg)
	authorSK := testkit.NewKey(t).SK
	ownerKey := testkit.NewKey(t)
	ownerSK, owner := ownerKey.SK, ownerKey.PK
	def := a.publish(t, authorSK, nostr.Event{Kind: 4199, Tags: nostr.Tags{{"title", "Scribe"}, {"role", "keeps notes"}}})
	agentA := installOn(t, a, def.ID, owner)
	publishClaims(t, a, ownerSK, agentA)
	if _, err := a.State().Register(ctx, serveTeamCap, []byte(serveTeamSchema)); err != nil {
		t.Fatal(err)
	}
	ca := state.Caller{Agent: agentA, Owner: owner, Capability: serveTeamCap, Scope: "sc:test", Verbs: state.AllVerbs}
	ids := make([]string, docs)
	for i := range ids {
		ids[i] = fmt.Sprintf("22222222-2222-4222-8222-%012d", i)
		body := fmt.Sprintf(`{"id":%q,"title":"draft","body":"The quick fox.","tags":["x"],"createdAt":"2025-05-15T10:00:00Z","updatedAt":"2025-05-15T10:00:00Z"}`, ids[i])
		if _, err := a.State().Create(ctx, ca, serveTeamURI, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	for j := range edits {
		patch := fmt.Sprintf(`[{"op":"replace","path":"/title","value":"edit %d"},{"op":"add","path":"/tags/-","value":"t%d"}]`, j, j)
		if _, err := a.State().Update(ctx, ca, serveTeamURI, ids[j%docs], []byte(patch)); err != nil {
			t.Fatal(err)
		}
	}

	b := startServe(t, "--config", cfg, "--peer", "ws://"+a.Addr())
	agentB := joinNode(t, a, b, def, authorSK, ownerSK, agentA, serveTeamCap, serveTeamSchema)
	cb := state.Caller{Agent: agentB, Owner: owner, Capability: serveTeamCap, Scope: "sc:test", Verbs: state.AllVerbs}
	start := time.Now()
	for _, id := range ids {
		testkit.WaitFor(t, 60*time.Second, "document "+id+" identical on B", func() bool {
			da, db := rawDoc(a, ca, id), rawDoc(b, cb, id)
			return db != "" && da == db
		})
	}
	t.Logf("%d documents with %d edits reached the late node in %s", docs, edits, time.Since(start))
	d, err := b.State().Get(ctx, cb, serveTeamURI, ids[0])
	if err != nil || d.Incomplete != "" {
		t.Fatalf("converged document still flagged incomplete: %v %v", d, err)
	}
	if _, err := b.State().Update(ctx, cb, serveTeamURI, ids[0], []byte(`[{"op":"replace","path":"/title","value":"from B"}]`)); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 60*time.Second, "B's edit on A", func() bool { return rawDoc(a, ca, ids[0]) == rawDoc(b, cb, ids[0]) })
}

// joinNode runs def's agent for the same owner on b beside agentA on a:
// the definition, both profiles and the owner's claims on both nodes (so
// each replica trusts the other), and capID's schema registered on b. It
// returns b's agent.
func joinNode(t *testing.T, a, b *servedNode, def *nostr.Event, authorSK, ownerSK, agentA, capID, schema string) string {
	t.Helper()
	owner, _ := nostr.GetPublicKey(ownerSK)
	b.publish(t, authorSK, nostr.Event{Kind: 4199, Tags: def.Tags, CreatedAt: def.CreatedAt})
	agentB := installOn(t, b, def.ID, owner)
	copyKind0(t, a, b, agentA)
	copyKind0(t, b, a, agentB)
	publishClaims(t, a, ownerSK, agentA, agentB)
	publishClaims(t, b, ownerSK, agentA, agentB)
	if _, err := b.State().Register(context.Background(), capID, []byte(schema)); err != nil {
		t.Fatal(err)
	}
	return agentB
}

func installOn(t *testing.T, n *servedNode, def, owner string) string {
	t.Helper()
	inst, err := n.Daemon().Install(context.Background(), agentd.InstallRequest{Definition: def, Owner: owner})
	if err != nil {
		t.Fatal(err)
	}
	return inst.Agent.PubKey
}

func copyKind0(t *testing.T, from, to *servedNode, agent string) {
	t.Helper()
	ctx := context.Background()
	evts, err := from.relay.QuerySync(ctx, nostr.Filter{Kinds: []int{0}, Authors: []string{agent}})
	if err != nil || len(evts) == 0 {
		t.Fatalf("profile of %s: %v (%d)", agent, err, len(evts))
	}
	for _, evt := range evts {
		if err := to.relay.Publish(ctx, evt); err != nil {
			t.Fatal(err)
		}
	}
}

func publishClaims(t *testing.T, n *servedNode, ownerSK string, agents ...string) {
	t.Helper()
	var tags nostr.Tags
	for _, a := range agents {
		tags = append(tags, nostr.Tag{"p", a})
	}
	claims := signed(t, ownerSK, nostr.Event{Kind: 14199, Tags: tags, CreatedAt: nostr.Now() + nostr.Timestamp(len(agents))})
	if err := n.relay.Publish(context.Background(), claims); err != nil {
		t.Fatal(err)
	}
}

// rawDoc is the document's materialised JSON on n, or "".
func rawDoc(n *servedNode, c state.Caller, id string) string {
	d, err := n.State().Get(context.Background(), c, serveTeamURI, id)
	if err != nil {
		return ""
	}
	return string(d.Object)
}

// A node that is stopped while edits happen on another one, and started
// again on the same data directory, converges to byte-identical documents
// (the edits it missed come back through anti-entropy and the catch-up).
func TestServe_OfflineNodeConverges(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "serve.json")
	if err := os.WriteFile(cfg, []byte(`{"state": {"anti_entropy_seconds": 1}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a := startServe(t, "--config", cfg)
	authorSK := testkit.NewKey(t).SK
	ownerKey := testkit.NewKey(t)
	ownerSK, owner := ownerKey.SK, ownerKey.PK
	def := a.publish(t, authorSK, nostr.Event{Kind: 4199, Tags: nostr.Tags{{"title", "Scribe"}, {"role", "keeps notes"}}})
	agentA := installOn(t, a, def.ID, owner)
	if _, err := a.State().Register(ctx, serveTeamCap, []byte(serveTeamSchema)); err != nil {
		t.Fatal(err)
	}
	dataB := t.TempDir()
	b := startServe(t, "--config", cfg, "--data", dataB, "--peer", "ws://"+a.Addr())
	agentB := joinNode(t, a, b, def, authorSK, ownerSK, agentA, serveTeamCap, serveTeamSchema)
	ca := state.Caller{Agent: agentA, Owner: owner, Capability: serveTeamCap, Scope: "sc:test", Verbs: state.AllVerbs}
	cb := state.Caller{Agent: agentB, Owner: owner, Capability: serveTeamCap, Scope: "sc:test", Verbs: state.AllVerbs}
	id := "33333333-3333-4333-8333-000000000001"
	body := fmt.Sprintf(`{"id":%q,"title":"draft","body":"The quick fox.","tags":["x"],"createdAt":"2025-05-15T10:00:00Z","updatedAt":"2025-05-15T10:00:00Z"}`, id)
	if _, err := a.State().Create(ctx, ca, serveTeamURI, []byte(body)); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 60*time.Second, "the document on B", func() bool { return rawDoc(b, cb, id) != "" && rawDoc(b, cb, id) == rawDoc(a, ca, id) })

	b.stop() // B goes offline; A goes on editing
	for j := range 10 {
		patch := fmt.Sprintf(`[{"op":"replace","path":"/title","value":"offline edit %d"},{"op":"add","path":"/tags/-","value":"o%d"}]`, j, j)
		if _, err := a.State().Update(ctx, ca, serveTeamURI, id, []byte(patch)); err != nil {
			t.Fatal(err)
		}
	}
	b = startServe(t, "--config", cfg, "--data", dataB, "--peer", "ws://"+a.Addr())
	testkit.WaitFor(t, 60*time.Second, "B to catch up after its restart", func() bool { return rawDoc(b, cb, id) == rawDoc(a, ca, id) })
	if d, err := b.State().Get(ctx, cb, serveTeamURI, id); err != nil || d.Incomplete != "" {
		t.Fatalf("after the restart: %v %v", d, err)
	}
}

// A document that expires (x-ttl) is purged by each node's lifecycle and
// does not come back from the other replica through anti-entropy.
func TestServe_ExpiredDocumentStaysGone(t *testing.T) {
	const capID, uri = "did:nuwa:cap:otp@1.0.0", "did:nuwa:state:otp#v1"
	const otpSchema = `{"$id": "did:nuwa:state:otp#v1", "type": "object",
  "x-asm": {"x-visibility": "shared", "x-ttl": "PT2S"},
  "properties": {"id": {"type": "string"}, "code": {"type": "string", "x-crdt": "lww_register"}}, "required": ["id", "code"]}`
	cfg := filepath.Join(t.TempDir(), "serve.json")
	if err := os.WriteFile(cfg, []byte(`{"state": {"anti_entropy_seconds": 1, "lifecycle_seconds": 1}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a := startServe(t, "--config", cfg)
	b := startServe(t, "--config", cfg, "--peer", "ws://"+a.Addr())
	authorSK := testkit.NewKey(t).SK
	ownerKey := testkit.NewKey(t)
	ownerSK, owner := ownerKey.SK, ownerKey.PK
	def := a.publish(t, authorSK, nostr.Event{Kind: 4199, Tags: nostr.Tags{{"title", "Guard"}, {"role", "one-time codes"}}})
	agentA := installOn(t, a, def.ID, owner)
	if _, err := a.State().Register(ctx, capID, []byte(otpSchema)); err != nil {
		t.Fatal(err)
	}
	agentB := joinNode(t, a, b, def, authorSK, ownerSK, agentA, capID, otpSchema)
	ca := state.Caller{Agent: agentA, Owner: owner, Capability: capID, Scope: "sc:test", Verbs: state.AllVerbs}
	cb := state.Caller{Agent: agentB, Owner: owner, Capability: capID, Scope: "sc:test", Verbs: state.AllVerbs}
	get := func(n *servedNode, c state.Caller) bool {
		_, err := n.State().Get(ctx, c, uri, "code-1")
		return err == nil
	}
	if _, err := a.State().Create(ctx, ca, uri, []byte(`{"id":"code-1","code":"424242"}`)); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 30*time.Second, "the code on B", func() bool { return get(b, cb) })
	testkit.WaitFor(t, 30*time.Second, "the code to expire on both", func() bool { return !get(a, ca) && !get(b, cb) })
	time.Sleep(3 * time.Second) // three anti-entropy rounds between the two replicas
	if get(a, ca) || get(b, cb) {
		t.Fatalf("an expired document came back (A %v, B %v)", get(a, ca), get(b, cb))
	}
}
