package hostile

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
)

// cliFails runs the binary, wants it to fail and returns its stderr.
func cliFails(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(binary, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err == nil {
		t.Fatalf("agentnode %s succeeded, want a failure: %s", strings.Join(args, " "), out)
	}
	return stderr.String()
}

// writeFiles writes name -> content files into a temp dir, returning their paths.
func writeFiles(t *testing.T, files map[string][]byte) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for name, b := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// TestDefinitionFiles_publishedOnOneNodeInstalledOnAnother: def publish
// --attach uploads two files to node A's Blossom server and writes their
// 1063s; node B's install fetches them from A, verifies them and puts
// them in the agent's home, byte for byte. A blob tampered with on A
// fails the next install whole.
func TestDefinitionFiles_publishedOnOneNodeInstalledOnAnother(t *testing.T) {
	authorSK := nostr.GeneratePrivateKey()
	author, _ := nostr.GetPublicKey(authorSK)
	authorNpub, _ := nip19.EncodePublicKey(author)
	a := startNodeWith(t, map[string]any{"blossom": map[string]any{"allow": []string{authorNpub}}})
	b := startNodeWith(t, map[string]any{"blossom": map[string]any{"fetch_allow_private": true}}) // A is on loopback
	files := map[string][]byte{"README.md": []byte("# Researcher\nRead the sources first.\n"), "style.json": bytes.Repeat([]byte(`{"tone":"plain"}`), 5000)}
	var def struct{ ID string }
	paths := writeFiles(t, files)
	cliJSON(t, &def, "def", "publish", "--relay", a.url, "--relay", b.url, "--key", authorSK, "--title", "Researcher", "--json",
		"--attach", paths[0], "--attach", paths[1])
	ownerSK := nostr.GeneratePrivateKey()
	owner, _ := nostr.GetPublicKey(ownerSK)
	var res struct{ Agent struct{ PubKey string } }
	cliJSON(t, &res, "agent", "install", def.ID, "--owner", owner, "--node", "http://"+b.addr, "--data", b.data, "--json")
	var show struct {
		Files []struct{ Name, Path, SHA256 string }
	}
	cliJSON(t, &show, "agent", "show", res.Agent.PubKey, "--node", "http://"+b.addr, "--json")
	if len(show.Files) != 2 {
		t.Fatalf("agent show lists %d files, want 2: %+v", len(show.Files), show.Files)
	}
	for _, f := range show.Files {
		got, err := os.ReadFile(f.Path)
		if err != nil || !bytes.Equal(got, files[f.Name]) {
			t.Fatalf("%s in the agent's home: %d bytes, %v; want the %d published bytes", f.Name, len(got), err, len(files[f.Name]))
		}
		if want := filepath.Join(b.data, "agents", res.Agent.PubKey, "files", f.Name); f.Path != want {
			t.Fatalf("file at %s, want %s", f.Path, want)
		}
	}

	page := getPage(t, "http://"+b.addr+"/agents/"+res.Agent.PubKey)
	if !strings.Contains(page, `id="agent-files"`) || !strings.Contains(page, "files/README.md") || !strings.Contains(page, "files/style.json") {
		t.Fatalf("the agent's web page does not list its files:\n%s", page)
	}

	// a tampered blob: same size, other bytes, on A's disk
	var def2 struct{ ID string }
	cliJSON(t, &def2, "def", "publish", "--relay", a.url, "--relay", b.url, "--key", authorSK, "--title", "Tampered", "--json",
		"--attach", writeFiles(t, map[string][]byte{"notes.txt": []byte("the genuine notes")})[0])
	blob := filepath.Join(a.data, "blobs", "data", sha("the genuine notes")[:2], sha("the genuine notes"))
	if err := os.WriteFile(blob, []byte("the tampered notes"[:len("the genuine notes")]), 0o600); err != nil {
		t.Fatal(err)
	}
	stderr := cliFails(t, "agent", "install", def2.ID, "--owner", owner, "--node", "http://"+b.addr, "--data", b.data, "--json")
	if !strings.Contains(stderr, "could not be fetched or verified") || !strings.Contains(stderr, "notes.txt") {
		t.Fatalf("install of a definition whose file was tampered with: %s; want a clear refusal naming the file", stderr)
	}
	var list struct{ Agents []struct{ PubKey string } }
	cliJSON(t, &list, "agent", "list", "--node", "http://"+b.addr, "--json")
	if len(list.Agents) != 1 {
		t.Fatalf("%d agents after the refused install, want 1 (the install must not half-happen)", len(list.Agents))
	}
	if left, _ := os.ReadDir(filepath.Join(b.data, "agents", ".staging")); len(left) != 0 {
		t.Fatalf("%d staging directories left behind", len(left))
	}
}

// getPage GETs a web page as text/html.
func getPage(t *testing.T, u string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Accept", "text/html")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d\n%s", u, resp.StatusCode, b)
	}
	return string(b)
}
