package interop_test

import (
	"testing"
)

// TestReferenceNegentropyInterop runs negentropy.test.mjs: hoytech's
// reference negentropy (vendored in negentropy/, protocol version 0x61,
// what strfry speaks) reconciles with a real `agentnode serve` over
// NEG-OPEN/NEG-MSG/NEG-CLOSE the way `strfry sync` does, with events on
// both sides the other lacks; the ids it reports (have/need) must be
// exactly those, the fetch and upload that follow must close the gap.
func TestReferenceNegentropyInterop(t *testing.T) {
	root, dir, node := nodeSuite(t, "ws")
	bin := buildAgentnode(t, root)
	srv := startServer(t, bin)
	runNodeFile(t, node, dir, "negentropy.test.mjs", "RELAY_URL=ws://"+srv.addr)
	srv.stop(t)
}
