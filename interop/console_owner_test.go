package interop_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/consent"
)

// ownerConsoleReport is what console_owner.mjs saw.
type ownerConsoleReport struct {
	Console       []string
	Stranger      string
	Owner         string
	SignedIn      string
	MyAgents      []string
	Pending       []string
	Overflow      map[string]int
	ApproveNotice string
	ForgedNotice  string
}

// TestOwnerSignsInWithNostrKey: two agents of two owners run on one node,
// each with a pending consent request. In headless chromium, with a NIP-07
// stand-in signing with the first owner's key, a key that owns nothing is
// refused; the owner signs in with one click (NIP-98 on the sign-in
// call), sees only their agent and only its request, approves it with a
// click, and cannot approve the other owner's request even by posting the
// form by hand; the console fits 1280 and 390 px screens. The node's
// consent store has the owner's request approved and the other pending.
func TestOwnerSignsInWithNostrKey(t *testing.T) {
	root := moduleRoot(t)
	node := browserPrereqs(t, root)
	shots := artifactsDir(t, root, "console-owner")
	bin := buildAgentnode(t, root)
	data := t.TempDir()
	srv := startServerWith(t, bin, data, nil)
	t.Cleanup(func() { srv.stop(t) })
	ownerSK, otherSK := nostr.GeneratePrivateKey(), nostr.GeneratePrivateKey()
	mineAgent := installOwned(t, bin, srv.addr, data, ownerSK, "Mine")
	theirAgent := installOwned(t, bin, srv.addr, data, otherSK, "Theirs")

	store, err := consent.Open(context.Background(), consent.Config{Path: filepath.Join(data, "agents", "consent.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ask := func(agent string) consent.Approval {
		a, err := store.Ask(context.Background(), consent.Request{Op: "delegate.remote", Agent: agent,
			Target: strings.Repeat("ab", 32), Summary: "translate a file for " + agent[:8]})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	mine, theirs := ask(mineAgent), ask(theirAgent)

	spec := map[string]string{"chromium": chromiumPath, "shots": shots, "base": "http://" + srv.addr,
		"sk": ownerSK, "stranger": nostr.GeneratePrivateKey(), "mine": mine.ID, "theirs": theirs.ID}
	var r ownerConsoleReport
	runBrowserScript(t, node, root, "console_owner.mjs", spec, &r)
	checkOwnerConsole(t, r, mineAgent, mine.ID)
	for id, want := range map[string]consent.Status{mine.ID: consent.StatusApproved, theirs.ID: consent.StatusPending} {
		if got, err := store.Get(context.Background(), id); err != nil || got.Status != want {
			t.Errorf("the node's consent store: %s is %q (%v), want %q", id, got.Status, err, want)
		}
	}
	t.Logf("screenshots in %s", shots)
}

// installOwned publishes a definition titled title and installs an agent
// of it owned by ownerSK's key; it returns the agent's hex key.
func installOwned(t *testing.T, bin, addr, data, ownerSK, title string) string {
	t.Helper()
	owner, _ := nostr.GetPublicKey(ownerSK)
	var def struct{ ID string }
	cli(t, bin, &def, "def", "publish", "--relay", "ws://"+addr, "--key", nostr.GeneratePrivateKey(),
		"--title", title, "--role", "a test agent", "--json")
	var inst struct{ Agent struct{ PubKey string } }
	cli(t, bin, &inst, "agent", "install", def.ID, "--owner", owner, "--node", "http://"+addr, "--data", data, "--json")
	return inst.Agent.PubKey
}

func checkOwnerConsole(t *testing.T, r ownerConsoleReport, agent, approval string) {
	t.Helper()
	if !strings.Contains(r.Stranger, "no agent on this node names this key as its owner") {
		t.Errorf("a key owning nothing: %q, want refused as owning no agent", r.Stranger)
	}
	if !strings.Contains(r.Owner, "Signed in as the owner npub1") {
		t.Fatalf("the owner's sign-in: %q", r.Owner)
	}
	if !slices.Equal(r.MyAgents, []string{agent}) || !slices.Equal(r.Pending, []string{approval}) {
		t.Errorf("the owner sees agents %v and pending %v, want only %s and %s", r.MyAgents, r.Pending, agent, approval)
	}
	for _, w := range []string{"1280", "390"} {
		if over, ok := r.Overflow[w]; !ok || over > 0 {
			t.Errorf("the signed-in console at %s px is %d px wider than the screen (measured %v)", w, over, ok)
		}
	}
	if r.ApproveNotice != "approved "+approval {
		t.Errorf("approving the owner's request: notice %q", r.ApproveNotice)
	}
	if !strings.Contains(r.ForgedNotice, "failed: that agent is not one of yours") {
		t.Errorf("approving another owner's request: notice %q, want refused", r.ForgedNotice)
	}
	for _, m := range r.Console {
		if !strings.Contains(m, "status of 403") { // the stranger's refusal
			t.Errorf("the browser logged: %s", m)
		}
	}
}
