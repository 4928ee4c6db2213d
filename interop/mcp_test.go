package interop_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// TestMCPSDKInterop runs mcp.test.mjs: the official TypeScript MCP SDK
// (npm) against a running `agentnode serve` — the registry tools on /mcp
// after `agentnode cap publish`, and the Agent Context Protocol on /acp
// (initialize, tools/list, agentSearch finding an installed agent).
func TestMCPSDKInterop(t *testing.T) {
	root, dir, node := nodeSuite(t, "@modelcontextprotocol/sdk")
	bin := buildAgentnode(t, root)
	data := t.TempDir()
	srv := startServerWith(t, bin, data, nil)
	agent := installAgent(t, bin, srv.addr, data)
	publishNotePackage(t, bin, root, srv.addr)
	token := apiToken(t, data)
	runNodeFile(t, node, dir, "mcp.test.mjs", "MCP_URL=http://"+srv.addr+"/mcp", "ACP_URL=http://"+srv.addr+"/acp",
		"API_TOKEN="+token, "CAP_NAME=note", "AGENT_PUBKEY="+agent)
	srv.stop(t)
}

// publishNotePackage signs the ACP spec's note example with a new key and
// publishes it to the node with the CLI.
func publishNotePackage(t *testing.T, bin, root, addr string) {
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
	var pub struct{ ID string }
	cli(t, bin, &pub, "cap", "publish", file, "--key", author, "--relay", "ws://"+addr, "--json")
	if pub.ID == "" {
		t.Fatalf("cap publish printed no event id")
	}
}
