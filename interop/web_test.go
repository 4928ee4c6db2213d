package interop_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"

	"github.com/agentnode/agentnode/internal/testkit"
)

// chromiumPath is Debian's chromium, which `make test` installs.
const chromiumPath = "/usr/bin/chromium"

// scriptLesson is a lesson's text that would run script if the page did
// not escape it (and if the CSP let it).
const scriptLesson = `<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">`

// pageReport is what browser.mjs saw on one page.
type pageReport struct {
	Status  int      `json:"status"`
	CSP     string   `json:"csp"`
	Console []string `json:"console"`
	Title   string   `json:"title"`
	Text    string   `json:"text"`
	Pwned   any      `json:"pwned"`
	Scripts int      `json:"scripts"`
	// ScriptSrc is each script's src ("inline" for none).
	ScriptSrc []string `json:"scriptSources"`
	// Overflow is how many pixels the page is wider than a screen of the
	// given width (browse's widths).
	Overflow    map[string]int `json:"overflow"`
	Shares      []share        `json:"shares"`
	Copied      *copied        `json:"copied"`
	Comments    []string       `json:"comments"`
	Agents      []string       `json:"agents"`
	Definitions []string       `json:"definitions"`
	Packages    []string       `json:"packages"`
	Ownership   *badge         `json:"ownership"`
	EvAgent     *evidence      `json:"evidenceAgent"`
	EvOwner     *evidence      `json:"evidenceOwner"`
	Lessons     []struct {
		Title    string `json:"title"`
		Text     string `json:"text"`
		Elements int    `json:"elements"`
		Decision string `json:"decision"`
	} `json:"lessons"`
}

type badge struct {
	Verified bool   `json:"verified"`
	Text     string `json:"text"`
}

type evidence struct {
	Present bool   `json:"present"`
	Text    string `json:"text"`
}

// webFixture is a served node holding two definitions, an installed agent
// of the first (owner named, not yet confirming), its own lesson, a
// stranger's lesson carrying script, and a capability package.
type webFixture struct {
	bin, addr                 string
	defA, defB, agent, owner  string // hex ids and keys
	ownerSK                   string
	agentNpub, strangerLesson string
}

// TestWebPagesInChromium drives the web page with a real headless
// chromium: the directory lists a published definition and an installed
// agent; the agent page shows "unverified", naming the missing owner
// side, until the owner's claims exist, then "verified" with both pieces
// of evidence; a lesson holding <script> renders as text and runs
// nothing; no page carries a script or logs an error; screenshots of the
// pages are saved under testdata/artifacts/web.
func TestWebPagesInChromium(t *testing.T) {
	root := moduleRoot(t)
	node := browserPrereqs(t, root)
	shots := artifactsDir(t, root, "web")
	f := startWebFixture(t, root)
	base := "http://" + f.addr
	agentURL := base + "/agents/" + f.agentNpub

	before := browse(t, node, root, shots, map[string]string{"directory": base + "/", "agent-unverified": agentURL})
	checkCommon(t, before)
	checkDirectory(t, before["directory"], f)
	checkUnverified(t, before["agent-unverified"])
	checkLessons(t, before["agent-unverified"])

	cli(t, f.bin, &struct{}{}, "claim", "add", f.agentNpub, "--owner-key", f.ownerSK, "--relay", "ws://"+f.addr, "--json")
	after := browse(t, node, root, shots, map[string]string{"agent-verified": agentURL,
		"definition": base + "/definitions/" + f.defA, "capabilities": base + "/capabilities",
		"search": base + "/search?q=reviewer"})
	checkCommon(t, after)
	checkVerified(t, after["agent-verified"])
	checkOthers(t, after)
	t.Logf("screenshots in %s", shots)
}

// browserPrereqs returns node, skipping when chromium is absent (make test
// installs it; it can be missing only where apt-get could not run).
func browserPrereqs(t *testing.T, root string) string {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("SKIP: no chromium at %s (%v): `make test` installs it with apt-get (make chromium); the browser tests need it", chromiumPath, err)
	}
	if _, err := os.Stat(filepath.Join(root, "interop", "node_modules", "puppeteer-core")); err != nil {
		t.Fatalf("puppeteer-core is not installed (%v): run `make test` (it installs the interop npm packages)", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node not found (%v): the browser tests need node 20+", err)
	}
	return node
}

// startWebFixture builds and serves the node and fills it with the CLI.
func startWebFixture(t *testing.T, root string) webFixture {
	t.Helper()
	f := webFixture{bin: buildAgentnode(t, root), ownerSK: nostr.GeneratePrivateKey()}
	data := t.TempDir()
	srv := startServerWith(t, f.bin, data, nil)
	f.addr = srv.addr
	t.Cleanup(func() { srv.stop(t) })
	relayURL := "ws://" + f.addr
	author := nostr.GeneratePrivateKey()
	var def struct{ ID string }
	cli(t, f.bin, &def, "def", "publish", "--relay", relayURL, "--key", author, "--title", "Code Reviewer",
		"--role", "a strict reviewer of Go code", "--tool", "read_file", "--slug", "code-reviewer", "--json")
	f.defA = def.ID
	cli(t, f.bin, &def, "def", "publish", "--relay", relayURL, "--key", author, "--title", "Travel Planner",
		"--role", "plans trips", "--json")
	f.defB = def.ID
	f.owner, _ = nostr.GetPublicKey(f.ownerSK)
	var inst struct{ Agent struct{ PubKey string } }
	cli(t, f.bin, &inst, "agent", "install", f.defA, "--owner", f.owner, "--node", "http://"+f.addr, "--data", data, "--json")
	f.agent = inst.Agent.PubKey
	f.agentNpub, _ = nip19.EncodePublicKey(f.agent)
	cli(t, f.bin, &struct{}{}, "agent", "learn", f.agent, "--title", "check errors", "--category", "go",
		"--content", "wrap errors with %w", "--node", "http://"+f.addr, "--data", data, "--json")
	var lesson struct{ ID string }
	cli(t, f.bin, &lesson, "lesson", "publish", "--definition", f.defA, "--title", "<b>a stranger's tip</b>",
		"--category", "x", "--content", scriptLesson, "--key", nostr.GeneratePrivateKey(), "--relay", relayURL, "--json")
	f.strangerLesson = lesson.ID
	publishNotePackage(t, f.bin, root, f.addr)
	waitBody(t, "http://"+f.addr+"/", `data-agent="`+f.agent+`"`)
	return f
}

// waitBody polls url until its body holds want (the directory ingests
// events on its own goroutine).
func waitBody(t *testing.T, url, want string) {
	t.Helper()
	testkit.WaitFor(t, startDeadline, url+" to show "+want, func() bool {
		resp, err := http.Get(url)
		if err != nil {
			return false
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return strings.Contains(string(b), want)
	})
}

// browse visits pages (name -> URL) with browser.mjs and returns its report.
func browse(t *testing.T, node, root, shots string, pages map[string]string) map[string]pageReport {
	t.Helper()
	return browseWith(t, node, root, shots, pages, browseOpts{})
}

// browseOpts are browser.mjs's options: the viewport widths to measure
// horizontal overflow at, and whether to click a copy button.
type browseOpts struct {
	widths []int
	copy   bool
}

// browseWith is browse with opts.
func browseWith(t *testing.T, node, root, shots string, pages map[string]string, opts browseOpts) map[string]pageReport {
	t.Helper()
	type visit struct {
		Name string `json:"name"`
		URL  string `json:"url"`
	}
	spec := struct {
		Chromium string  `json:"chromium"`
		Shots    string  `json:"shots"`
		Pages    []visit `json:"pages"`
		Widths   []int   `json:"widths,omitempty"`
		Copy     bool    `json:"copy,omitempty"`
	}{Chromium: chromiumPath, Shots: shots, Widths: opts.widths, Copy: opts.copy}
	for name, url := range pages {
		spec.Pages = append(spec.Pages, visit{name, url})
	}
	report := map[string]pageReport{}
	runBrowserScript(t, node, root, "browser.mjs", spec, &report)
	return report
}

// runBrowserScript runs interop/<script> with spec as its JSON argument
// and decodes the one JSON report it prints into report; its stderr goes
// to the test log.
func runBrowserScript(t *testing.T, node, root, script string, spec, report any) {
	t.Helper()
	arg, _ := json.Marshal(spec)
	ctx, cancel := context.WithTimeout(context.Background(), nodeTimeout(t))
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, string(arg))
	cmd.Dir = filepath.Join(root, "interop")
	logs := &lineLogger{t: t, prefix: "browser: "}
	defer logs.flush()
	cmd.Stderr = logs
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v", script, err)
	}
	if err := json.Unmarshal(out, report); err != nil {
		t.Fatalf("%s printed no report (%v): %s", script, err, out)
	}
}

// checkCommon: every page answered 200 under the strict CSP, holds no
// script but the node's own (static/*.js), logged nothing (a CSP violation would be logged) and ran no
// injected script.
func checkCommon(t *testing.T, pages map[string]pageReport) {
	t.Helper()
	for name, p := range pages {
		if p.Status != http.StatusOK {
			t.Errorf("%s: status %d", name, p.Status)
		}
		if !strings.Contains(p.CSP, "default-src 'none'") {
			t.Errorf("%s: Content-Security-Policy %q", name, p.CSP)
		}
		if !ownScripts(p.ScriptSrc) || p.Pwned != nil {
			t.Errorf("%s: scripts on the page %q, window.__pwned = %v", name, p.ScriptSrc, p.Pwned)
		}
		if len(p.Console) != 0 {
			t.Errorf("%s: the browser logged %q", name, p.Console)
		}
	}
}

func checkDirectory(t *testing.T, p pageReport, f webFixture) {
	t.Helper()
	if !slices.Contains(p.Agents, f.agent) {
		t.Errorf("directory lists agents %v, not the installed %s", p.Agents, f.agent)
	}
	for _, id := range []string{f.defA, f.defB} {
		if !slices.Contains(p.Definitions, id) {
			t.Errorf("directory lists definitions %v, not %s", p.Definitions, id)
		}
	}
	for _, want := range []string{"Code Reviewer", "Travel Planner", "read_file"} {
		if !strings.Contains(p.Text, want) {
			t.Errorf("directory text lacks %q", want)
		}
	}
}

func checkUnverified(t *testing.T, p pageReport) {
	t.Helper()
	if p.Ownership == nil || p.Ownership.Verified {
		t.Fatalf("before the owner's claims: ownership badge %+v, want unverified", p.Ownership)
	}
	if p.EvAgent == nil || !p.EvAgent.Present {
		t.Errorf("agent side of the evidence: %+v, want present (its kind 0 names the owner)", p.EvAgent)
	}
	if p.EvOwner == nil || p.EvOwner.Present || !strings.Contains(p.EvOwner.Text, "Missing: the owner's claims (kind 14199") {
		t.Errorf("owner side of the evidence: %+v, want named as missing", p.EvOwner)
	}
}

func checkVerified(t *testing.T, p pageReport) {
	t.Helper()
	if p.Ownership == nil || !p.Ownership.Verified || !strings.Contains(p.Ownership.Text, "verified") {
		t.Fatalf("after the owner's claims: ownership badge %+v, want verified", p.Ownership)
	}
	if p.EvAgent == nil || !p.EvAgent.Present || p.EvOwner == nil || !p.EvOwner.Present {
		t.Errorf("evidence %+v / %+v, want both sides present", p.EvAgent, p.EvOwner)
	}
}

// checkLessons: the agent's own lesson is applied (rule self); the
// stranger's is refused with a reason and its markup is text.
func checkLessons(t *testing.T, p pageReport) {
	t.Helper()
	var own, stranger bool
	for _, l := range p.Lessons {
		switch l.Title {
		case "check errors":
			own = true
			if !strings.Contains(l.Decision, "applied") || !strings.Contains(l.Decision, "self") {
				t.Errorf("the agent's own lesson: decision %q, want applied by the rule self", l.Decision)
			}
		case "<b>a stranger's tip</b>":
			stranger = true
			if l.Text != scriptLesson || l.Elements != 0 {
				t.Errorf("the stranger's lesson renders as %q with %d elements, want its text verbatim and no elements", l.Text, l.Elements)
			}
			if !strings.HasPrefix(l.Decision, "refused — ") || len(l.Decision) < len("refused — x") {
				t.Errorf("the stranger's lesson: decision %q, want refused with a reason", l.Decision)
			}
		}
	}
	if !own || !stranger {
		t.Errorf("lessons on the agent page %+v: want the agent's and the stranger's", p.Lessons)
	}
}

// checkOthers: the definition, registry and search pages show what the
// node holds.
func checkOthers(t *testing.T, pages map[string]pageReport) {
	t.Helper()
	if p := pages["definition"]; !strings.Contains(p.Text, "Code Reviewer") || len(p.Lessons) != 2 {
		t.Errorf("definition page: %d lessons, text %q", len(p.Lessons), p.Text)
	}
	if p := pages["capabilities"]; len(p.Packages) != 1 || !strings.Contains(p.Packages[0], "note") {
		t.Errorf("capabilities page lists %q, want the note package", p.Packages)
	}
	if p := pages["search"]; !strings.Contains(p.Text, "Code Reviewer") {
		t.Errorf("search for reviewer: %q", p.Text)
	}
}
