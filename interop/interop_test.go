package interop_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentnode/agentnode/internal/pgtest"
)

// Deadlines of the harness; nothing sleeps for a fixed time.
const (
	startDeadline    = 30 * time.Second // relay accepting after start
	shutdownDeadline = 15 * time.Second // relay exited after SIGTERM
	nodeDeadline     = 5 * time.Minute  // whole node --test run
)

// TestNostrToolsInterop runs relay.test.mjs (nostr-tools) against a freshly
// built `agentnode serve`, then checks the server stops cleanly on SIGTERM:
// once per storage mode, the same suite (lmdb: the embedded default;
// postgres: --postgres on a fresh database of the test cluster,
// internal/pgtest). -run 'TestNostrToolsInterop/postgres' picks one.
func TestNostrToolsInterop(t *testing.T) {
	root, dir, node := nodeSuite(t, "nostr-tools")

	bin := buildAgentnode(t, root)
	for _, mode := range []string{"lmdb", "postgres"} {
		t.Run(mode, func(t *testing.T) {
			var env []string
			if mode == "postgres" {
				env = []string{"AGENTNODE_POSTGRES=" + pgtest.URL(t)}
			}
			srv := startServerWith(t, bin, t.TempDir(), env)
			runNodeTests(t, node, dir, "ws://"+srv.addr, bin)
			srv.stop(t)
		})
	}
}

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// moduleRoot is the directory of the main module's go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		t.Fatalf("go env GOMOD: not inside a module (%q)", gomod)
	}
	return filepath.Dir(gomod)
}

// buildAgentnode builds ./cmd/agentnode into a temporary directory.
func buildAgentnode(t *testing.T, root string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "agentnode")
	cmd := exec.Command("go", "build", "-tags", "libsecp256k1", "-o", bin, "./cmd/agentnode")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/agentnode: %v\n%s", err, out)
	}
	return bin
}

// server is a running `agentnode serve` subprocess.
type server struct {
	addr   string
	cmd    *exec.Cmd
	logs   *lineLogger
	exited chan struct{} // closed when Wait returns
	err    error         // Wait's result, set before exited closes
}

// startServer starts `agentnode serve` on a free port with a fresh data
// directory and returns once it answers HTTP. Cleanup kills it if the test
// ends without stop.
func startServer(t *testing.T, bin string) *server {
	t.Helper()
	return startServerWith(t, bin, t.TempDir(), nil)
}

// startServerWith starts `agentnode serve` on a free port with data
// directory data and env added to the process's environment, and returns
// once it answers HTTP. Cleanup kills it if the test ends without stop.
func startServerWith(t *testing.T, bin, data string, env []string) *server {
	t.Helper()
	s := &server{addr: freeAddr(t), logs: &lineLogger{t: t, prefix: "agentnode serve: "}, exited: make(chan struct{})}
	s.cmd = exec.Command(bin, "serve", "--listen", s.addr, "--data", data)
	s.cmd.Env = append(os.Environ(), env...)
	s.cmd.Stdout, s.cmd.Stderr = s.logs, s.logs
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start agentnode serve: %v", err)
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-s.exited:
		default:
			s.cmd.Process.Kill()
			<-s.exited
		}
		s.logs.flush()
	})
	s.waitReady(t)
	return s
}

// freeAddr returns a 127.0.0.1 address whose port was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// waitReady polls the NIP-11 endpoint until it answers 200, the process
// exits, or startDeadline passes.
func (s *server) waitReady(t *testing.T) {
	t.Helper()
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(startDeadline)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if s.ready(client) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("agentnode serve not answering on %s after %v", s.addr, startDeadline)
		}
		select {
		case <-s.exited:
			t.Fatalf("agentnode serve exited before accepting connections: %v", s.err)
		case <-tick.C:
		}
	}
}

func (s *server) ready(client *http.Client) bool {
	req, err := http.NewRequest(http.MethodGet, "http://"+s.addr, nil)
	if err != nil {
		return false
	}
	req.Header.Set("Accept", "application/nostr+json")
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// stop sends SIGTERM and requires a clean exit (status 0) within
// shutdownDeadline.
func (s *server) stop(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM agentnode serve: %v", err)
	}
	select {
	case <-s.exited:
	case <-time.After(shutdownDeadline):
		t.Fatalf("agentnode serve still running %v after SIGTERM", shutdownDeadline)
	}
	if s.err != nil {
		t.Fatalf("agentnode serve did not shut down cleanly on SIGTERM: %v", s.err)
	}
}

// runNodeTests runs `node --test relay.test.mjs` in dir, streaming its
// output to t.Log, and fails the test if node exits non-zero.
func runNodeTests(t *testing.T, node, dir, relayURL, bin string) {
	t.Helper()
	runNodeFile(t, node, dir, "relay.test.mjs", "RELAY_URL="+relayURL, "AGENTNODE_BIN="+bin)
}

// runNodeFile runs `node --test file` in dir with env added, streaming its
// output to t.Log, and fails the test if node exits non-zero.
func runNodeFile(t *testing.T, node, dir, file string, env ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), nodeTimeout(t))
	defer cancel()
	out := &lineLogger{t: t, prefix: "node: "}
	defer out.flush()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", file)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), env...), "NO_COLOR=1")
	cmd.Stdout, cmd.Stderr = out, out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("node --test %s: still running after %v", file, nodeTimeout(t))
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		t.Fatalf("node --test %s failed (%v); its output is above", file, err)
	}
	if err != nil {
		t.Fatalf("node --test %s: %v", file, err)
	}
}

// nodeTimeout is nodeDeadline, shortened to leave room before go test's own
// deadline.
func nodeTimeout(t *testing.T) time.Duration {
	d := nodeDeadline
	if dl, ok := t.Deadline(); ok {
		if left := time.Until(dl) - shutdownDeadline - 5*time.Second; left < d {
			d = left
		}
	}
	return d
}

// lineLogger writes each complete line to t.Log; it is safe for concurrent
// use by a subprocess's stdout and stderr copiers.
type lineLogger struct {
	t      *testing.T
	prefix string
	mu     sync.Mutex
	buf    []byte
}

func (w *lineLogger) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.t.Log(w.prefix + string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
}

// flush logs a trailing line that had no newline.
func (w *lineLogger) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.t.Log(w.prefix + string(w.buf))
		w.buf = nil
	}
}
