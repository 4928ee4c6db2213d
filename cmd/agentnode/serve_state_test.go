package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/internal/testkit"
)

const (
	serveTeamCap = "did:nuwa:cap:team@1.0.0"
	serveTeamURI = "did:nuwa:state:team#v1"
	serveTeamID  = "11111111-1111-4111-8111-111111111111"
)

// serveTeamSchema is a shared note: the owner and all its verified agents.
const serveTeamSchema = `{
  "$id": "did:nuwa:state:team#v1",
  "type": "object", "x-asm": {"x-visibility": "shared"},
  "properties": {
    "id": {"type": "string", "format": "uuid"},
    "title": {"type": "string", "x-crdt": "lww_register"},
    "body": {"type": "string", "x-crdt": "rga_text"},
    "tags": {"type": "array", "items": {"type": "string"}, "x-crdt": "grow_only_set"},
    "createdAt": {"type": "string", "format": "date-time"},
    "updatedAt": {"type": "string", "format": "date-time"}
  },
  "required": ["id", "title", "body", "createdAt", "updatedAt"]
}`

// TestServe_StateReplicatesBetweenNodes: two served nodes (A with --peer
// to B) run the same definition for one owner, whose claims list both
// agents. A shared note created on A reaches B; concurrent edits on both
// runtimes converge on both.
func TestServe_StateReplicatesBetweenNodes(t *testing.T) {
	b := startServe(t)
	a := startServe(t, "--peer", "ws://"+b.Addr())
	ctx := context.Background()

	authorSK := testkit.NewKey(t).SK
	ownerKey := testkit.NewKey(t)
	ownerSK, owner := ownerKey.SK, ownerKey.PK
	def := a.publish(t, authorSK, nostr.Event{Kind: 4199, Tags: nostr.Tags{{"title", "Scribe"}, {"role", "keeps notes"}}})
	b.publish(t, authorSK, nostr.Event{Kind: 4199, Tags: def.Tags, CreatedAt: def.CreatedAt})
	install := func(n *servedNode) string {
		inst, err := n.Daemon().Install(ctx, agentd.InstallRequest{Definition: def.ID, Owner: owner})
		if err != nil {
			t.Fatal(err)
		}
		return inst.Agent.PubKey
	}
	agentA, agentB := install(a), install(b)
	// Both relays know both agents' profiles and the owner's claims.
	copyProfile := func(from, to *servedNode, agent string) {
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
	copyProfile(a, b, agentA)
	copyProfile(b, a, agentB)
	claims := signed(t, ownerSK, nostr.Event{Kind: 14199, Tags: nostr.Tags{{"p", agentA}, {"p", agentB}}})
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
	for _, n := range []*servedNode{a, b} {
		if got, err := n.verifiedAgents(ctx, owner); err != nil || len(got) != 2 {
			t.Fatalf("the owner's verified agents: %v, %v", got, err)
		}
	}

	ca := state.Caller{Agent: agentA, Owner: owner, Capability: serveTeamCap, Scope: "sc:test", Verbs: state.AllVerbs}
	cb := state.Caller{Agent: agentB, Owner: owner, Capability: serveTeamCap, Scope: "sc:test", Verbs: state.AllVerbs}
	note, _ := json.Marshal(map[string]any{"id": serveTeamID, "title": "draft", "body": "The quick fox.", "tags": []string{"x"},
		"createdAt": "2025-05-15T10:00:00Z", "updatedAt": "2025-05-15T10:00:00Z"})
	if _, err := a.State().Create(ctx, ca, serveTeamURI, note); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	t.Cleanup(func() {
		if t.Failed() {
			for _, n := range []*servedNode{a, b} {
				for pk, r := range n.Replicators() {
					t.Logf("replicator %s: %+v", pk[:8], r.Stats())
				}
			}
		}
	})
	testkit.WaitFor(t, 20*time.Second, "the note to reach B", func() bool { return stateDoc(t, b, cb) != nil })
	t.Logf("shared note created on A reached B in %s", time.Since(start))

	const rounds = 4
	var wg sync.WaitGroup
	for _, side := range []struct {
		n    *servedNode
		c    state.Caller
		name string
	}{{a, ca, "a"}, {b, cb, "b"}} {
		wg.Go(func() {
			for i := range rounds {
				if _, err := side.n.State().Update(ctx, side.c, serveTeamURI, serveTeamID, []byte(fmt.Sprintf(
					`[{"op":"replace","path":"/title","value":"from %[1]s %[2]d"},{"op":"add","path":"/tags/-","value":"%[1]s%[2]d"}]`, side.name, i))); err != nil {
					t.Errorf("update on %s: %v", side.name, err)
				}
			}
		})
	}
	wg.Wait()

	start = time.Now()
	var da, db map[string]any
	testkit.WaitFor(t, 30*time.Second, "both nodes to converge", func() bool {
		da, db = stateDoc(t, a, ca), stateDoc(t, b, cb)
		if da == nil || db == nil {
			return false
		}
		ja, _ := json.Marshal(da)
		jb, _ := json.Marshal(db)
		return string(ja) == string(jb) && len(da["tags"].([]any)) == 1+2*rounds
	})
	t.Logf("converged in %s: title %q, tags %v", time.Since(start), da["title"], da["tags"])
	for _, side := range []string{"a", "b"} {
		for i := range rounds {
			if !slices.Contains(da["tags"].([]any), any(fmt.Sprintf("%s%d", side, i))) {
				t.Fatalf("tag %s%d missing: %v", side, i, da["tags"])
			}
		}
	}
	if title := da["title"].(string); !strings.HasPrefix(title, "from ") {
		t.Fatalf("title %q", title)
	}
}

// stateDoc returns the shared note on n as c sees it, or nil.
func stateDoc(t *testing.T, n *servedNode, c state.Caller) map[string]any {
	t.Helper()
	d, err := n.State().Get(context.Background(), c, serveTeamURI, serveTeamID)
	var se *state.Error
	if errors.As(err, &se) && se.Code == state.CodeNotFound {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(d.Object, &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}
