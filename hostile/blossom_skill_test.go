package hostile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"

	"github.com/agentnode/agentnode/events"
)

// TestSkill_withAFileEntersThePromptWithProvenance: a kind-4202 skill
// with one file (uploaded with `file put`, described by a 1063) installs
// on an agent: the file lands in the agent's skills directory byte for
// byte, and the effective prompt carries the skill's instructions under
// its provenance. A stranger's skill is refused unless accepted.
func TestSkill_withAFileEntersThePromptWithProvenance(t *testing.T) {
	authorSK := nostr.GeneratePrivateKey()
	author, _ := nostr.GetPublicKey(authorSK)
	authorNpub, _ := nip19.EncodePublicKey(author)
	n := startNodeWith(t, map[string]any{"blossom": map[string]any{"allow": []string{authorNpub}}})
	body := []byte("checklist: 1. read 2. cite 3. summarise\n")
	path := filepath.Join(t.TempDir(), "checklist.txt")
	os.WriteFile(path, body, 0o600)
	var put []struct {
		URL, SHA256 string
		Size        int64
	}
	cliJSON(t, &put, "file", "put", path, "--server", "http://"+n.addr, "--key", authorSK, "--json")

	c := n.client(t)
	meta := events.FileMetadata{URL: put[0].URL, SHA256: put[0].SHA256, Size: put[0].Size, Type: "text/plain", Name: "checklist.txt"}
	m := meta.Template()
	fileEvt, err := publish(c, authorSK, m.Kind, m.Tags, m.Content, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	skill := events.Skill{Title: "Careful research", License: "MIT", Content: "Follow checklist.txt before answering.",
		Files: []events.EventRef{{ID: fileEvt.ID, Marker: events.MarkerFile}}}
	s := skill.Template()
	skillEvt, err := publish(c, authorSK, s.Kind, s.Tags, s.Content, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}

	var def struct{ ID string }
	cliJSON(t, &def, "def", "publish", "--relay", n.url, "--key", authorSK, "--title", "Researcher", "--instructions", "Research.", "--json")
	owner, _ := nostr.GetPublicKey(nostr.GeneratePrivateKey())
	var res struct{ Agent struct{ PubKey string } }
	cliJSON(t, &res, "agent", "install", def.ID, "--owner", owner, "--node", "http://"+n.addr, "--data", n.data, "--json")
	agent := res.Agent.PubKey

	var installed struct {
		Files []struct{ Path string }
	}
	cliJSON(t, &installed, "agent", "skill", "add", agent, skillEvt.ID, "--node", "http://"+n.addr, "--data", n.data, "--json")
	if len(installed.Files) != 1 {
		t.Fatalf("skill installed with %d files, want 1", len(installed.Files))
	}
	if got, err := os.ReadFile(installed.Files[0].Path); err != nil || string(got) != string(body) {
		t.Fatalf("the skill's file: %q, %v", got, err)
	}
	if want := filepath.Join(n.data, "agents", agent, "skills", skillEvt.ID, "checklist.txt"); installed.Files[0].Path != want {
		t.Fatalf("skill file at %s, want %s", installed.Files[0].Path, want)
	}
	var eff struct{ Prompt string }
	cliJSON(t, &eff, "agent", "show", agent, "--effective", "--node", "http://"+n.addr, "--json")
	for _, want := range []string{"## Skill: Careful research", "skill " + skillEvt.ID + ", kind 4202", "by " + authorNpub, "license MIT", "Follow checklist.txt before answering."} {
		if !strings.Contains(eff.Prompt, want) {
			t.Fatalf("the effective prompt lacks %q:\n%s", want, eff.Prompt)
		}
	}

	// a stranger's skill: shown and refused, installed only when accepted
	stranger := nostr.GeneratePrivateKey()
	other := events.Skill{Title: "Shortcuts", Content: "Skip the sources."}
	o := other.Template()
	otherEvt, err := publish(c, stranger, o.Kind, o.Tags, o.Content, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	stderr := cliFails(t, "agent", "skill", "add", agent, otherEvt.ID, "--node", "http://"+n.addr, "--data", n.data)
	if !strings.Contains(stderr, "not trusted") || !strings.Contains(stderr, "Shortcuts") {
		t.Fatalf("a stranger's skill: %s; want it shown and refused", stderr)
	}
	cliJSON(t, &installed, "agent", "skill", "add", agent, otherEvt.ID, "--accept", "--node", "http://"+n.addr, "--data", n.data, "--json")
	cliJSON(t, &eff, "agent", "show", agent, "--effective", "--node", "http://"+n.addr, "--json")
	if !strings.Contains(eff.Prompt, "## Skill: Shortcuts") || !strings.Contains(eff.Prompt, "accepted by the owner, author not trusted") {
		t.Fatalf("the accepted skill is not in the prompt with its provenance:\n%s", eff.Prompt)
	}
}
