package interop_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestReferenceNegentropyInterop runs negentropy.test.mjs: hoytech's
// reference negentropy (vendored in negentropy/, protocol version 0x61,
// what strfry speaks) reconciles with a real `agentnode serve` over
// NEG-OPEN/NEG-MSG/NEG-CLOSE the way `strfry sync` does, with events on
// both sides the other lacks; the ids it reports (have/need) must be
// exactly those, the fetch and upload that follow must close the gap.
func TestReferenceNegentropyInterop(t *testing.T) {
	root := moduleRoot(t)
	dir := filepath.Join(root, "interop")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "ws")); err != nil {
		t.Fatalf("interop npm packages are not installed (%v): run `make test` (it installs the interop npm packages)", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node not found (%v): the interop suite needs node 20+", err)
	}
	bin := buildAgentnode(t, root)
	srv := startServer(t, bin)
	runNodeFile(t, node, dir, "negentropy.test.mjs", "RELAY_URL=ws://"+srv.addr)
	srv.stop(t)
}
