package dm_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestService_nostrToolsClient runs interop/dm.test.mjs against this
// package's service on a real relay: a DM sent with nostr-tools (a client
// agentnode does not control) gets a reply that nostr-tools decrypts. The
// same file runs against `agentnode serve` in interop (TestNostrToolsDM).
func TestService_nostrToolsClient(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "interop"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "nostr-tools")); err != nil {
		t.Skipf("interop npm packages are not installed (%v): cd interop && npm ci", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("node not found (%v)", err)
	}
	n := newNode(t)
	agent := n.addAgent()
	n.start(n.config())

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "dm.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "RELAY_URL="+n.url, "AGENT_PUBKEY="+agent.pk,
		"DM_ANSWER_PREFIX=echo: ", "DM_REQUIRED=true", "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	t.Logf("node --test dm.test.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("node --test dm.test.mjs: %v", err)
	}
	if got := len(n.resp.texts()); got != 1 {
		t.Errorf("Responder called %d times, want 1", got)
	}
}
