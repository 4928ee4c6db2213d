package interop_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// TestBlossomClientSDK runs blossom.test.mjs: blossom-client-sdk (pinned in
// package.json) uploads, lists, downloads and deletes a blob on the node's
// Blossom server with a key the node's config allows, and a stranger's
// upload is refused.
func TestBlossomClientSDK(t *testing.T) {
	root, dir, node := nodeSuite(t, "blossom-client-sdk")
	sk := nostr.GeneratePrivateKey()
	pk, _ := nostr.GetPublicKey(sk)
	config := filepath.Join(t.TempDir(), "config.json")
	b, _ := json.Marshal(map[string]any{"blossom": map[string]any{"allow": []string{pk}}})
	if err := os.WriteFile(config, b, 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServerWith(t, buildAgentnode(t, root), t.TempDir(), []string{"AGENTNODE_CONFIG=" + config})
	runNodeFile(t, node, dir, "blossom.test.mjs", "BLOSSOM_URL=http://"+srv.addr, "BLOSSOM_SK="+sk)
	srv.stop(t)
}
