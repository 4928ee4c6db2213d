package interop_test

import (
	"bufio"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
)

// TestContextVMInterop runs contextvm.test.mjs: the stock ContextVM SDK
// (@contextvm/sdk, with @modelcontextprotocol/sdk's Client) calls an agent
// of a real `agentnode serve` with default settings over the node's own
// relay — initialize, tools/list, tools/call (a valid, an invalid and an
// unknown call), ping — in plaintext and with encryption required, each
// twice in a row in a new node process (a new client key and a new MCP
// session numbering its requests from 1 again); first, before the owner
// opens the note state, a write is PERMISSION_DENIED (the caller is the
// requester); and the discovery finds the agent from its announcements.
func TestContextVMInterop(t *testing.T) {
	root, dir, node := nodeSuite(t, "@contextvm/sdk")
	bin := buildAgentnode(t, root)
	data := t.TempDir()
	srv := startServerWith(t, bin, data, nil)
	agent := installAgent(t, bin, srv.addr, data)
	installNote(t, bin, root, srv.addr, data, agent)
	run := func(mode, open string) {
		runNodeFile(t, node, dir, "contextvm.test.mjs", "RELAY_URL=ws://"+srv.addr, "AGENT_PUBKEY="+agent,
			"MODE="+mode, "NOTE_ID="+uuid(), "STATE_OPEN="+open)
	}
	// The caller is the requester: its write is refused until the owner
	// opens the note state to others.
	t.Run("closed", func(t *testing.T) { run("required", "0") })
	if out, err := exec.Command(bin, "agent", "state", "open", agent, "did:nuwa:state:note#v1", "write",
		"--node", "http://"+srv.addr, "--data", data).CombinedOutput(); err != nil {
		t.Fatalf("agent state open: %v\n%s", err, out)
	}
	for _, mode := range []string{"disabled", "required"} {
		for round := range 2 {
			t.Run(fmt.Sprintf("%s/%d", mode, round+1), func(t *testing.T) { run(mode, "1") })
		}
	}
	srv.stop(t)
}

// TestContextVMServerInterop runs contextvm-server.test.mjs: a stock
// ContextVM server and client talk through agentnode's relay and through
// a plain khatru relay (bench serve), plaintext and encrypted; and an
// agent calls the stock server through an mcp_service binding whose
// service_uri is nostr:<npub>, its output schema coming from the server.
func TestContextVMServerInterop(t *testing.T) {
	root, dir, node := nodeSuite(t, "@contextvm/sdk")
	bin := buildAgentnode(t, root)
	plain := startPlainRelay(t, bin)
	data := t.TempDir()
	srv := startServerWith(t, bin, data, nil)
	agent := installAgent(t, bin, srv.addr, data)
	serverSK := nostr.GeneratePrivateKey()
	serverPK, _ := nostr.GetPublicKey(serverSK)
	npub, _ := nip19.EncodePublicKey(serverPK)
	startStockServer(t, node, dir, "ws://"+srv.addr, serverSK)
	installNote(t, bin, root, srv.addr, data, agent, `service_uri: "nostr:`+npub+`"`)
	token := apiToken(t, data)
	runNodeFile(t, node, dir, "contextvm-server.test.mjs", "RELAY_URL=ws://"+srv.addr, "PLAIN_RELAY_URL="+plain,
		"AGENT_MCP_URL=http://"+srv.addr+"/mcp/agents/"+agent, "API_TOKEN="+token)
	srv.stop(t)
}

// startStockServer runs contextvm-stock-server.mjs (a stock ContextVM
// server with key sk on relayURL) until the test ends, and returns once
// it is subscribed.
func startStockServer(t *testing.T, node, dir, relayURL, sk string) {
	t.Helper()
	cmd := exec.Command(node, "contextvm-stock-server.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "RELAY_URL="+relayURL, "SERVER_SK="+sk)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	startLogged(t, cmd, "stock server: ")
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "ready" {
				ready <- true
			}
		}
		ready <- false
		io.Copy(io.Discard, out)
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatal("the stock ContextVM server exited before it was ready")
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the stock ContextVM server was not ready in 60 s")
	}
}

// startPlainRelay runs `agentnode bench serve --relay khatru+lmdb` (plain
// khatru over LMDB, no agentnode policy) and returns its ws:// URL.
func startPlainRelay(t *testing.T, bin string) string {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(bin, "bench", "serve", "--relay", "khatru+lmdb", "--listen", addr, "--dir", t.TempDir())
	startLogged(t, cmd, "bench serve: ")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return "ws://" + addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("bench serve never listened on %s", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// installNote signs the ACP spec's note example with a new key and
// installs it on agent with the CLI; a fetch binding (e.g. `service_uri:
// "nostr:npub1…"`) replaces the example's service_uri of fetch_web_content.
func installNote(t *testing.T, bin, root, addr, data, agent string, fetchBinding ...string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "capabilities", "acp", "testdata", "note.acp.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range fetchBinding {
		raw = []byte(strings.Replace(string(raw), `service_uri: "did:nuwa:mcp:webscraper:version1"`, b, 1))
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
