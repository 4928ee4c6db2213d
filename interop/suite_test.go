package interop_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// nodeSuite is what a suite run by node needs: the module root, the
// interop directory and the node binary. It fails the test, saying how to
// fix it, when node or the npm package pkg (its path under node_modules)
// is missing.
func nodeSuite(t *testing.T, pkg string) (root, dir, node string) {
	t.Helper()
	root = moduleRoot(t)
	dir = filepath.Join(root, "interop")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg)); err != nil {
		t.Fatalf("interop npm packages are not installed (%v): run `make test` (it installs the interop npm packages)", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node not found (%v): the interop suite needs node 20+", err)
	}
	return root, dir, node
}

// apiToken is the API token of the node whose data directory is data.
func apiToken(t *testing.T, data string) string {
	t.Helper()
	token, err := os.ReadFile(filepath.Join(data, "agents", "api.token"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(token))
}

// artifactsDir is interop/testdata/artifacts/<name> (ignored by git),
// emptied.
func artifactsDir(t *testing.T, root, name string) string {
	t.Helper()
	dir := filepath.Join(root, "interop", "testdata", "artifacts", name)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// startLogged starts cmd with its stderr (and its stdout, unless the
// caller took it) logged line by line under prefix; at cleanup it kills
// cmd and waits for it.
func startLogged(t *testing.T, cmd *exec.Cmd, prefix string) {
	t.Helper()
	logs := &lineLogger{t: t, prefix: prefix}
	cmd.Stderr = logs
	if cmd.Stdout == nil { // StdoutPipe sets it
		cmd.Stdout = logs
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		logs.flush()
	})
}
