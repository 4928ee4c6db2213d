package interop_test

import (
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// TestContextVMInterop runs contextvm.test.mjs: the stock ContextVM SDK
// (@contextvm/sdk, with @modelcontextprotocol/sdk's Client) calls an agent
// of a real `agentnode serve` with default settings over the node's own
// relay — initialize, tools/list, tools/call (a valid, an invalid and an
// unknown call), ping — in plaintext and with encryption required, each
// twice in a row in a new node process (a new client key and a new MCP
// session numbering its requests from 1 again).
func TestContextVMInterop(t *testing.T) {
	root := moduleRoot(t)
	dir := filepath.Join(root, "interop")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@contextvm", "sdk")); err != nil {
		t.Fatalf("interop npm packages are not installed (%v): run `make test` (it installs the interop npm packages)", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node not found (%v): the interop suite needs node 20+", err)
	}
	bin := buildAgentnode(t, root)
	data := t.TempDir()
	srv := startServerWith(t, bin, data, nil)
	agent := installAgent(t, bin, srv.addr, data)
	installNote(t, bin, root, srv.addr, data, agent)
	for _, mode := range []string{"disabled", "required"} {
		for round := range 2 {
			t.Run(fmt.Sprintf("%s/%d", mode, round+1), func(t *testing.T) {
				runNodeFile(t, node, dir, "contextvm.test.mjs", "RELAY_URL=ws://"+srv.addr, "AGENT_PUBKEY="+agent,
					"MODE="+mode, "NOTE_ID="+uuid())
			})
		}
	}
	srv.stop(t)
}

// installNote signs the ACP spec's note example with a new key and
// installs it on agent with the CLI.
func installNote(t *testing.T, bin, root, addr, data, agent string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "capabilities", "acp", "testdata", "note.acp.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "note.acp.yaml")
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	author := nostr.GeneratePrivateKey()
	if out, err := exec.Command(bin, "cap", "sign", file, "--key", author).CombinedOutput(); err != nil {
		t.Fatalf("cap sign: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "agent", "cap", "install", agent, file, "--node", "http://"+addr, "--data", data).CombinedOutput(); err != nil {
		t.Fatalf("agent cap install: %v\n%s", err, out)
	}
}

// uuid is a random version-4 UUID.
func uuid() string {
	b := make([]byte, 16)
	rand.Read(b)
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
