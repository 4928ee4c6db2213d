package hostile

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
)

// TestDefinitionFiles_yamlFilesKeyAndUpgrade: a definition file's files:
// (paths relative to it) are uploaded and tagged like --attach; an agent
// installed from it has them, and `agent upgrade --yes` to a version
// whose files: differ replaces them (the dropped one removed).
func TestDefinitionFiles_yamlFilesKeyAndUpgrade(t *testing.T) {
	authorSK := nostr.GeneratePrivateKey()
	author, _ := nostr.GetPublicKey(authorSK)
	authorNpub, _ := nip19.EncodePublicKey(author)
	n := startNodeWith(t, map[string]any{"blossom": map[string]any{"allow": []string{authorNpub}}})
	dir := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", "# Researcher\n")
	write("sub/notes.txt", "read the sources first\n")
	write("checklist.txt", "1. cite\n")
	write("v1.yaml", "title: Researcher\nslug: researcher\nver: \"1\"\nfiles:\n  - README.md\n  - sub/notes.txt\n")
	write("v2.yaml", "title: Researcher\nslug: researcher\nver: \"2\"\nfiles: [README.md, checklist.txt]\n")

	var v1, v2 struct{ ID string }
	cliJSON(t, &v1, "def", "publish", "--file", filepath.Join(dir, "v1.yaml"), "--relay", n.url, "--key", authorSK, "--json")
	owner, _ := nostr.GetPublicKey(nostr.GeneratePrivateKey())
	var res struct{ Agent struct{ PubKey string } }
	cliJSON(t, &res, "agent", "install", v1.ID, "--owner", owner, "--node", "http://"+n.addr, "--data", n.data, "--json")
	home := filepath.Join(n.data, "agents", res.Agent.PubKey, "files")
	wantHome(t, home, map[string]string{"README.md": "# Researcher\n", "notes.txt": "read the sources first\n"})

	cliJSON(t, &v2, "def", "publish", "--file", filepath.Join(dir, "v2.yaml"), "--relay", n.url, "--key", authorSK, "--json")
	var plan struct {
		Applied bool
		Added   []string `json:"files_added"`
		Removed []string `json:"files_removed"`
	}
	cliJSON(t, &plan, "agent", "upgrade", res.Agent.PubKey, "--to", v2.ID, "--yes", "--node", "http://"+n.addr, "--data", n.data, "--json")
	if !plan.Applied || !slices.Equal(plan.Added, []string{"checklist.txt"}) || !slices.Equal(plan.Removed, []string{"notes.txt"}) {
		t.Fatalf("upgrade: %+v; want applied, checklist.txt added, notes.txt removed", plan)
	}
	wantHome(t, home, map[string]string{"README.md": "# Researcher\n", "checklist.txt": "1. cite\n"})
}

// wantHome: dir holds exactly want (name -> content).
func wantHome(t *testing.T, dir string, want map[string]string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(want) {
		t.Fatalf("%s holds %d files, want %v", dir, len(entries), want)
	}
	for name, content := range want {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != content {
			t.Fatalf("%s: %q, %v; want %q", name, b, err, content)
		}
	}
}
