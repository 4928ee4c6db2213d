package hostile

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/pgtest"
	"github.com/agentnode/agentnode/internal/relayclient"
	"github.com/agentnode/agentnode/internal/testkit"
)

// binary is the agentnode binary built once by TestMain.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agentnode-hostile-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "agentnode")
	args := []string{"build", "-tags", "libsecp256k1", "-o", binary}
	if os.Getenv("HOSTILE_RACE") != "" { // HOSTILE_RACE=1: the node under attack is built with -race
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, "../cmd/agentnode")...)
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build ../cmd/agentnode: %v\n%s", err, out)
		os.Exit(1)
	}
	code := pgtest.Main(m) // stops the PostgreSQL cluster the Postgres-mode tests started
	os.RemoveAll(dir)
	os.Exit(code)
}

// node is a running `agentnode serve`.
type node struct {
	addr   string // host:port
	url    string // ws://host:port
	data   string // its data directory
	cmd    *exec.Cmd
	logs   *testkit.Buffer
	exited chan struct{}
	err    error  // the process's exit error, once exited is closed
	launch launch // how it was started (restartNode)
}

// startNode starts the binary on a free port with relayConfig as the
// --config file's "relay" section (nil: none) and waits until it serves.
func startNode(t testing.TB, relayConfig map[string]any) *node {
	t.Helper()
	if relayConfig == nil {
		return startNodeWith(t, nil)
	}
	return startNodeWith(t, map[string]any{"relay": relayConfig})
}

// startNodeWith starts the binary with config as its --config file (nil:
// none) and waits until it serves (launchNode's shorthand).
func startNodeWith(t testing.TB, config map[string]any) *node {
	t.Helper()
	return launchNode(t, launch{config: config})
}

// launch is how launchNode starts `agentnode serve`.
type launch struct {
	data       string         // the data directory ("": a new temporary one; a restart passes the old one)
	config     map[string]any // the --config file's content (nil: no --config, unless configPath)
	configPath string         // an existing --config file (when config is nil)
	args       []string       // more serve flags (--peer ...), after --listen
	env        []string       // more environment (KEY=value)
	logLevel   string         // --log-level ("": warn)
	addr       string         // the listen address ("": a free port)
	wait       time.Duration  // how long to wait for /healthz (0: 30 s)
}

// launchNode is the one way the hostile tests start the binary: `agentnode
// serve` as l says, waiting until it serves; the process is killed at the
// test's end (and its output logged if the test failed). The node's
// launch.configPath is its --config file ("" without one), which a test
// may rewrite before a SIGHUP.
func launchNode(t testing.TB, l launch) *node {
	t.Helper()
	if l.data == "" {
		l.data = t.TempDir()
	}
	if l.logLevel == "" {
		l.logLevel = "warn"
	}
	if l.wait == 0 {
		l.wait = 30 * time.Second
	}
	args := []string{"serve", "--data", l.data, "--log-level", l.logLevel}
	if l.config != nil {
		l.configPath = filepath.Join(t.TempDir(), "config.json")
		writeConfig(t, l.configPath, l.config)
		l.config = nil
	}
	if l.configPath != "" {
		args = append(args, "--config", l.configPath)
	}
	if l.addr == "" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		l.addr = ln.Addr().String()
		ln.Close()
	}
	n := &node{addr: l.addr, url: "ws://" + l.addr, data: l.data, logs: &testkit.Buffer{}, exited: make(chan struct{}), launch: l}
	n.cmd = exec.Command(binary, append(append(args, "--listen", l.addr), l.args...)...)
	if len(l.env) > 0 {
		n.cmd.Env = append(os.Environ(), l.env...)
	}
	n.cmd.Stdout, n.cmd.Stderr = n.logs, n.logs
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { n.err = n.cmd.Wait(); close(n.exited) }()
	t.Cleanup(func() {
		n.cmd.Process.Kill()
		<-n.exited
		if strings.Contains(n.logs.String(), "WARNING: DATA RACE") {
			t.Error("the node reported a data race (HOSTILE_RACE build)")
		}
		if t.Failed() {
			t.Logf("node %s output:\n%s", l.addr, n.logs.String())
		}
	})
	testkit.WaitFor(t, l.wait, "the node to serve", func() bool {
		select {
		case <-n.exited:
			t.Fatalf("agentnode serve exited: %v\n%s", n.err, n.logs.String())
		default:
		}
		return n.healthy()
	})
	return n
}

// restartNode stops n with SIGTERM and starts the binary again over the
// same data directory, with the same arguments, on the same address.
func restartNode(t *testing.T, n *node) *node {
	t.Helper()
	if _, err := n.terminate(t, 30*time.Second); err != nil {
		t.Fatalf("stop the node: %v", err)
	}
	l := n.launch
	l.wait = 60 * time.Second
	return launchNode(t, l)
}

// writeConfig writes config as JSON to path (atomically: a reload never
// reads half a file).
func writeConfig(t testing.TB, path string, config map[string]any) {
	t.Helper()
	b, err := json.Marshal(config)
	if err != nil {
		t.Fatal(err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// healthy reports whether /healthz answers 200 within two seconds.
func (n *node) healthy() bool {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + n.addr + "/healthz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// rssBytes is the node process's resident set size.
func (n *node) rssBytes(t testing.TB) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", n.cmd.Process.Pid))
	if err != nil {
		t.Fatalf("read the node's RSS: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024
		}
	}
	t.Fatal("no VmRSS in /proc/<pid>/status")
	return 0
}

// terminate sends SIGTERM and waits up to limit for the process to exit.
func (n *node) terminate(t *testing.T, limit time.Duration) (time.Duration, error) {
	t.Helper()
	start := time.Now()
	n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.exited:
		return time.Since(start), n.err
	case <-time.After(limit):
		return time.Since(start), fmt.Errorf("still running %s after SIGTERM", limit)
	}
}

// client connects an ordinary client (the project's relayclient).
func (n *node) client(t *testing.T) *relayclient.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := relayclient.Dial(ctx, n.url, relayclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// publish signs and publishes one event, waiting up to wait for its OK.
func publish(c *relayclient.Conn, sk string, kind int, tags nostr.Tags, content string, wait time.Duration) (*nostr.Event, error) {
	evt := &nostr.Event{Kind: kind, Tags: tags, Content: content, CreatedAt: nostr.Now()}
	if err := evt.Sign(sk); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	return evt, c.Publish(ctx, evt)
}

// token is the node's API token (<data>/agents/api.token).
func (n *node) token(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(n.data, "agents", "api.token"))
	if err != nil {
		t.Fatalf("read the API token: %v", err)
	}
	return strings.TrimSpace(string(b))
}
