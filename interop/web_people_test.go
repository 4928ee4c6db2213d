package interop_test

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
)

// share is one NIP-19 code a page offers: the copy button's text and the
// nostr: link.
type share struct {
	Code string `json:"code"`
	Href string `json:"href"`
}

// copied is what clicking a copy button put on the clipboard.
type copied struct {
	Code      string `json:"code"`
	Clipboard string `json:"clipboard"`
	Label     string `json:"label"`
}

// ownScripts reports whether every script on a page is one of the node's
// own files (static/*.js): no inline script, nothing from elsewhere.
func ownScripts(srcs []string) bool {
	for _, src := range srcs {
		if ok, _ := path.Match("/static/*.js", src); !ok {
			return false
		}
	}
	return true
}

// phoneWidths are the viewports every page must fit: a phone and a laptop.
var phoneWidths = []int{390, 1280}

// TestWebPagesFitPhones loads every public page (directory, agent,
// definition, lesson with a comment, recent lessons, capabilities,
// search, the console's sign-in) in headless chromium at 390 and 1280 px: none is wider than the
// screen; the agent page offers its npub as text, as a nostr: link and as
// a copy button whose click puts the npub on the clipboard; the lesson
// page lists its comment; /lessons lists the recent lessons.
func TestWebPagesFitPhones(t *testing.T) {
	root := moduleRoot(t)
	node := browserPrereqs(t, root)
	shots := artifactsDir(t, root, "web")
	f := startWebFixture(t, root)
	base := "http://" + f.addr
	var c struct{ ID string }
	cli(t, f.bin, &c, "comment", f.strangerLesson, "--content", "a comment <i>with markup</i> and a long word "+strings.Repeat("x", 300),
		"--key", nostr.GeneratePrivateKey(), "--relay", "ws://"+f.addr, "--json")
	pages := map[string]string{"directory": base + "/", "agent": base + "/agents/" + f.agentNpub,
		"definition": base + "/definitions/" + f.defA, "lesson": base + "/lessons/" + f.strangerLesson,
		"lessons": base + "/lessons", "capabilities": base + "/capabilities", "search": base + "/search?q=reviewer",
		"console": base + "/console"}
	got := browseWith(t, node, root, shots, pages, browseOpts{widths: phoneWidths})
	checkCommon(t, got)
	checkFits(t, got)
	checkShares(t, got, f)
	if cs := got["lesson"].Comments; len(cs) != 1 || !strings.HasPrefix(cs[0], "a comment <i>with markup</i>") {
		t.Errorf("the lesson page lists comments %q, want the one comment as text", cs)
	}
	if ls := got["lessons"].Lessons; len(ls) != 2 {
		t.Errorf("/lessons lists %d lessons, want the agent's and the stranger's", len(ls))
	}
	agent := browseWith(t, node, root, shots, map[string]string{"agent-copy": pages["agent"]}, browseOpts{copy: true})["agent-copy"]
	if c := agent.Copied; c == nil || c.Code != f.agentNpub || c.Clipboard != f.agentNpub || c.Label != "copied" {
		t.Errorf("the agent page's copy button: %+v, want %s on the clipboard", agent.Copied, f.agentNpub)
	}
}

// checkFits: no page is wider than any of the screens.
func checkFits(t *testing.T, pages map[string]pageReport) {
	t.Helper()
	for name, p := range pages {
		for _, w := range phoneWidths {
			over, ok := p.Overflow[fmt.Sprint(w)]
			if !ok || over > 0 {
				t.Errorf("%s at %d px: %d px wider than the screen (measured %v)", name, w, over, ok)
			}
		}
	}
}

// checkShares: the agent page offers its npub, the definition and lesson
// pages their nevent, each with a nostr: link.
func checkShares(t *testing.T, pages map[string]pageReport, f webFixture) {
	t.Helper()
	nevent := func(id string) func(string) bool {
		return func(code string) bool {
			prefix, v, err := nip19.Decode(code)
			return err == nil && prefix == "nevent" && fmt.Sprint(v) != "" && strings.Contains(fmt.Sprintf("%+v", v), id)
		}
	}
	wants := map[string]func(string) bool{
		"agent":      func(code string) bool { return code == f.agentNpub },
		"definition": nevent(f.defA),
		"lesson":     nevent(f.strangerLesson),
	}
	for name, want := range wants {
		i := slices.IndexFunc(pages[name].Shares, func(s share) bool { return want(s.Code) })
		if i < 0 {
			t.Errorf("%s page shares %+v: not its own code", name, pages[name].Shares)
			continue
		}
		if s := pages[name].Shares[i]; s.Href != "nostr:"+s.Code {
			t.Errorf("%s page: link %q for %s, want nostr:%s", name, s.Href, s.Code, s.Code)
		}
	}
}
