package hostile

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentnode/agentnode/internal/testkit"
)

// launch is how launchNode starts the binary.
type launch struct {
	data   string         // the data directory ("": a new temporary one)
	config map[string]any // the --config file's content (nil: no --config)
	args   []string       // more serve flags
	env    []string       // more environment (KEY=value)
}

// launchNode starts `agentnode serve` as l says on a free port and waits
// until it serves; it returns the node and the path of its --config file
// ("" without one), which a test may rewrite before a SIGHUP.
func launchNode(t *testing.T, l launch) (*node, string) {
	t.Helper()
	if l.data == "" {
		l.data = t.TempDir()
	}
	args := []string{"serve", "--data", l.data, "--log-level", "info"}
	var cfgPath string
	if l.config != nil {
		cfgPath = filepath.Join(t.TempDir(), "config.json")
		writeConfig(t, cfgPath, l.config)
		args = append(args, "--config", cfgPath)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	n := &node{addr: addr, url: "ws://" + addr, data: l.data, logs: &testkit.Buffer{}, exited: make(chan struct{})}
	n.cmd = exec.Command(binary, append(append(args, "--listen", addr), l.args...)...)
	n.cmd.Env = append(os.Environ(), l.env...)
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
			t.Logf("node output:\n%s", n.logs.String())
		}
	})
	testkit.WaitFor(t, 30*time.Second, "the node to serve", func() bool {
		select {
		case <-n.exited:
			t.Fatalf("agentnode serve exited: %v\n%s", n.err, n.logs.String())
		default:
		}
		return n.healthy()
	})
	return n, cfgPath
}

// writeConfig writes config as JSON to path (atomically: a reload never
// reads half a file).
func writeConfig(t *testing.T, path string, config map[string]any) {
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
