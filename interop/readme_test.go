package interop_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestREADME_Walkthrough runs the command lines of README.md's "Using it"
// section, as written, against the real binary and a node serving a fresh
// ./agentnode-data: a README line that fails fails the test. Placeholders
// (<def id>, nsec1..., <agent npub>, …) are replaced by the values the
// earlier lines produced (the first `key generate` is the author's, the
// second the owner's); lines that would start a second node or wait for
// a person (serve, an interactive chat) are named and skipped. The walk
// must leave the repository clean: every file it writes goes to a scratch
// directory.
func TestREADME_Walkthrough(t *testing.T) {
	root := moduleRoot(t)
	lines := readmeCommands(t, filepath.Join(root, "README.md"))
	if len(lines) < 20 {
		t.Fatalf("found only %d command lines in README.md's walkthrough", len(lines))
	}
	w := newWalk(t, root)
	for _, line := range lines {
		if why := w.skip(line); why != "" {
			t.Logf("skipped: %s (%s)", line, why)
			continue
		}
		w.run(line)
	}
	entries, _ := os.ReadDir(w.dir)
	for _, e := range entries {
		if name := e.Name(); name != "bin" && name != "capabilities" && name != "agentnode-data" {
			t.Errorf("the README walk left %s in the repository root", name)
		}
	}
	if w.values["<agent npub>"] == "" || w.values["<owner npub>"] == "" {
		t.Errorf("the README walk installed no agent for a second (owner) key: %v", w.values)
	}
}

// readmeCommands returns the command lines of the ```sh blocks between
// "## Using it" and the next top-level section after the walkthrough
// ("## Docker"), continuation lines joined and trailing comments removed.
func readmeCommands(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	comment := regexp.MustCompile(`\s{2,}#.*$`)
	var out []string
	section, inBlock, pending := false, false, ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			section = line == "## Using it"
		case section && line == "```sh":
			inBlock = true
		case section && inBlock && line == "```":
			inBlock = false
		case section && inBlock:
			line = strings.TrimSpace(comment.ReplaceAllString(line, ""))
			if cont, ok := strings.CutSuffix(line, `\`); ok {
				pending += strings.TrimSpace(cont) + " "
				continue
			}
			if line = pending + line; line != "" {
				out = append(out, line)
			}
			pending = ""
		}
	}
	return out
}

// walk is the state of a README walkthrough: the node, the keys and the
// ids the lines produced.
type walk struct {
	t      *testing.T
	dir    string // the working directory: bin/agentnode, capabilities/, agentnode-data/
	srv    *server
	env    []string
	values map[string]string // placeholder -> value
}

func newWalk(t *testing.T, root string) *walk {
	bin := buildAgentnode(t, root)
	dir := t.TempDir()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Mkdir(filepath.Join(dir, "bin"), 0o755))
	must(os.Symlink(bin, filepath.Join(dir, "bin", "agentnode")))
	must(os.Symlink(filepath.Join(root, "capabilities"), filepath.Join(dir, "capabilities")))
	srv := startServerWith(t, bin, filepath.Join(dir, "agentnode-data"), nil)
	w := &walk{t: t, dir: dir, srv: srv, values: map[string]string{},
		env: append(os.Environ(), "AGENTNODE_RELAY=ws://"+srv.addr, "AGENTNODE_NODE=http://"+srv.addr)}
	return w
}

// skip says why a README line is not run here ("" to run it).
func (w *walk) skip(line string) string {
	switch {
	case strings.HasPrefix(line, "make "):
		return "the test built the binary"
	case strings.HasPrefix(line, "bin/agentnode serve"):
		return "the node is already serving this data directory"
	case regexp.MustCompile(`^bin/agentnode chat <agent>$`).MatchString(line):
		return "interactive; chat is tested with a scripted model elsewhere"
	}
	return ""
}

// run fills a line's placeholders, runs it with sh and records what it
// produced for later lines.
func (w *walk) run(line string) {
	t := w.t
	if key, ok := strings.CutPrefix(line, "export AGENTNODE_KEY="); ok {
		if key == "nsec1..." {
			key = w.values["author nsec"]
		}
		w.env = append(w.env, "AGENTNODE_KEY="+key)
		w.values["<author npub>"] = w.values["author npub"]
		return
	}
	if m := scratchDir.FindStringSubmatch(line); m != nil { // NAME=$(mktemp -d) && rest: NAME stays set
		w.env = append(w.env, m[1]+"="+t.TempDir())
		line = m[2]
	}
	cmd := w.fill(line)
	out := w.sh(cmd)
	t.Logf("ran: %s", cmd)
	switch {
	case strings.HasPrefix(line, "bin/agentnode key generate") && w.values["author nsec"] == "":
		w.values["author nsec"] = find(t, out, `nsec1[02-9ac-hj-np-z]+`)
		w.values["author npub"] = find(t, out, `npub1[02-9ac-hj-np-z]+`)
	case strings.HasPrefix(line, "bin/agentnode key generate"):
		w.values["owner nsec"] = find(t, out, `nsec1[02-9ac-hj-np-z]+`)
		w.values["<owner npub>"] = find(t, out, `npub1[02-9ac-hj-np-z]+`)
	case strings.HasPrefix(line, "bin/agentnode def publish"):
		w.values["<def id>"] = find(t, out, `event ([0-9a-f]{64})`)
	case strings.HasPrefix(line, "bin/agentnode lesson publish"):
		w.values["<lesson id>"] = find(t, out, `event ([0-9a-f]{64})`)
	case strings.HasPrefix(line, "bin/agentnode agent install"):
		w.values["<agent npub>"] = find(t, out, `installed agent .* (npub1[02-9ac-hj-np-z]+)`)
	}
}

// scratchDir is a README line that makes a scratch directory for the
// lines after it: `NAME=$(mktemp -d) && rest`.
var scratchDir = regexp.MustCompile(`^([A-Z_]+)=\$\(mktemp -d\) && (.+)$`)

// fill replaces the README's placeholders in line.
func (w *walk) fill(line string) string {
	v := w.values
	r := strings.NewReplacer(
		"--owner-key nsec1...", "--owner-key "+v["owner nsec"],
		"--key nsec1...", "--key "+v["author nsec"],
		"<def id|naddr|npub:slug>", v["<def id>"],
		"<def id>", v["<def id>"],
		"<lesson id>", v["<lesson id>"],
		"<agent npub>", v["<agent npub>"],
		"<agent>", v["<agent npub>"],
		"<owner npub>", v["<owner npub>"],
		"--owner <npub>", "--owner "+v["<owner npub>"],
		" ... ", " x ",
		"127.0.0.1:7447", w.srv.addr,
	)
	line = r.Replace(line)
	line = strings.TrimSuffix(line, " ...") + map[bool]string{true: " x", false: ""}[strings.HasSuffix(line, " ...")]
	if strings.Contains(line, "<") && regexp.MustCompile(`<[a-z][a-z |:]*>`).MatchString(line) {
		w.t.Fatalf("a README placeholder this test does not know: %s", line)
	}
	return line
}

// sh runs one command line in the walkthrough's directory and fails the
// test when it fails.
func (w *walk) sh(line string) string {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Dir, cmd.Env = w.dir, w.env
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		w.t.Fatalf("README line still running after 60 s: %s\n%s", line, out)
	}
	if err != nil {
		w.t.Fatalf("README line failed: %s\n%v\n%s", line, err, out)
	}
	return string(out)
}

// find returns the first match of re in s (its first group, if it has one).
func find(t *testing.T, s, re string) string {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no %s in:\n%s", re, s)
	}
	return m[len(m)-1]
}
