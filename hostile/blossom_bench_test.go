package hostile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
)

// BenchmarkInstall10Files is the install time of a definition with ten
// 1 MiB files: node B fetches them from node A's Blossom server over
// loopback, verifies and places them (`agentnode agent install`, one
// process per install, as a user runs it). docs/BLOSSOM.md has the figure.
//
//	go test -tags libsecp256k1 -run '^$' -bench Install10Files -benchtime 5x ./hostile/
func BenchmarkInstall10Files(b *testing.B) {
	authorSK := nostr.GeneratePrivateKey()
	author, _ := nostr.GetPublicKey(authorSK)
	npub, _ := nip19.EncodePublicKey(author)
	a := startNodeWith(b, map[string]any{"blossom": map[string]any{"allow": []string{npub}}})
	n := startNodeWith(b, map[string]any{"blossom": map[string]any{"fetch_allow_private": true}})
	dir := b.TempDir()
	args := []string{"def", "publish", "--relay", a.url, "--relay", n.url, "--key", authorSK, "--title", "Ten files", "--json"}
	for i := range 10 {
		p := filepath.Join(dir, fmt.Sprintf("file-%d.bin", i))
		if err := os.WriteFile(p, bytes.Repeat([]byte{byte(i)}, 1<<20), 0o600); err != nil {
			b.Fatal(err)
		}
		args = append(args, "--attach", p)
	}
	var def struct{ ID string }
	benchCLI(b, &def, args...)
	owner, _ := nostr.GetPublicKey(nostr.GeneratePrivateKey())
	i := 0
	for b.Loop() {
		var res struct{ Agent struct{ PubKey string } }
		benchCLI(b, &res, "agent", "install", def.ID, "--owner", owner, "--name", fmt.Sprint("agent ", i), "--node", "http://"+n.addr, "--data", n.data, "--json")
		i++
	}
}

// benchCLI runs the binary and decodes its JSON output into v.
func benchCLI(b *testing.B, v any, args ...string) {
	b.Helper()
	out, err := exec.Command(binary, args...).Output()
	if err != nil {
		b.Fatalf("agentnode %v: %v", args, err)
	}
	if err := json.Unmarshal(out, v); err != nil {
		b.Fatalf("agentnode %v: %v: %s", args, err, out)
	}
}
