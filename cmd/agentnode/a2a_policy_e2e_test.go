package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/llm/llmtest"
)

// startA2APolicyPair is startA2APair with B serving under an "a2a" policy.
func startA2APolicyPair(t *testing.T, policy map[string]any) (a, b a2aNode) {
	t.Helper()
	cfg := configFile(t, map[string]any{"a2a": policy})
	b = installServedAgent(t, waitServing(t, startServe(t, "--config", cfg)), "Note Keeper")
	raw, err := os.ReadFile(notePackageFile(t, t.TempDir(), "1.0.0", ""))
	if err != nil {
		t.Fatal(err)
	}
	b.installSigned(t, raw)
	b.openNotes(t) // A's agent is a stranger to B's owner
	return startCaller(t, b, llmtest.NewServer(t)), b
}

// remoteNote has A's agent call remote_note on B's agent.
func remoteNote(t *testing.T, a, b a2aNode, id string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tools, _, err := a.Daemon().Tools(ctx, a.agent.Npub, "remote-note")
	if err != nil {
		t.Fatal(err)
	}
	_, err = tools.CallTool(ctx, "remote_note", []byte(noteArgs(b.agent.Npub, id, "policy")))
	return err
}

// With "a2a": {"from": "owner"}, a stranger's agent may not run B's tools:
// PERMISSION_DENIED travels back over kind 25910 and nothing is written.
func TestA2A_E2E_PolicyOwnerRefusesStrangers(t *testing.T) {
	a, b := startA2APolicyPair(t, map[string]any{"from": "owner"})
	err := remoteNote(t, a, b, "55555555-5555-4555-8555-555555555555")
	if code := capabilities.CodeOf(err); code != capabilities.CodePermissionDenied || !strings.Contains(err.Error(), "owner allows") {
		t.Fatalf("a stranger's call: %v (code %s), want PERMISSION_DENIED", err, code)
	}
	if got := notesOn(t, b); len(got) != 0 {
		t.Fatalf("B's state.db holds %v after a refused call", got)
	}
}

// With "a2a": {"from": "allowlist"} naming A's agent, the call runs.
func TestA2A_E2E_PolicyAllowlistAdmits(t *testing.T) {
	// A's agent key exists only once A runs, so A starts first, peering
	// with the address B will listen on.
	bAddr := freeLoopbackAddr(t)
	cfgA := configFile(t, map[string]any{"model": modelSection(llmtest.NewServer(t))})
	a := installServedAgent(t, waitServing(t, startServe(t, "--peer", "ws://"+bAddr, "--config", cfgA)), "Remote Writer")
	remote, err := os.ReadFile("testdata/a2a_remote_note.acp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a.installSigned(t, remote)
	cfgB := configFile(t, map[string]any{"a2a": map[string]any{"from": "allowlist", "allow": []string{a.agent.Npub}}})
	b := installServedAgent(t, waitServing(t, startServe(t, "--listen", bAddr, "--config", cfgB)), "Note Keeper")
	note, err := os.ReadFile(notePackageFile(t, t.TempDir(), "1.0.0", ""))
	if err != nil {
		t.Fatal(err)
	}
	b.installSigned(t, note)
	b.openNotes(t) // admitted by the policy, still a stranger to B's state
	const id = "66666666-6666-4666-8666-666666666666"
	if err := remoteNote(t, a, b, id); err != nil {
		t.Fatalf("an allowed caller: %v", err)
	}
	if got := notesOn(t, b); got[id] != "policy" {
		t.Fatalf("B's state.db = %v, want the note", got)
	}
}
