package hostile

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/capabilities/registry/registrytest"
	"github.com/agentnode/agentnode/internal/testkit"
)

// Item 11, package squatting. The real author publishes note@1.0.0; a
// stranger then publishes note@8.0.0 back-dated a year. `cap show`, MCP
// resolve_capability and `agent cap install` used to pick the stranger's
// (the earliest created_at "published first"); a 30199 whose file was
// unsigned was stored and installed. Now the stranger never wins and the
// unsigned package is refused at install with a clear error.
func TestRegistry_backDatedStrangerPackageNeverWins(t *testing.T) {
	n := startNode(t, nil)
	real, stranger := testkit.NewKey(t), testkit.NewKey(t)
	c := n.client(t)
	publishPackage(t, c, real.SK, registrytest.Spec{Name: "note", Version: "1.0.0"}, time.Now())
	publishPackage(t, c, stranger.SK, registrytest.Spec{Name: "note", Version: "8.0.0"}, time.Now().Add(-365*24*time.Hour))

	// cap show has no memory of arrival: it must not pick the stranger;
	// naming both authors as ambiguous is right.
	out, err := n.cli(t, "", "cap", "show", "did:nuwa:cap:note", "--relay", n.url, "--json")
	var shown struct {
		Author  string `json:"pubkey"`
		Version string `json:"version"`
	}
	if err == nil {
		json.Unmarshal([]byte(out), &shown)
	}
	switch {
	case err != nil && !strings.Contains(err.Error(), "ambiguous"):
		t.Errorf("cap show did:nuwa:cap:note: %v, want the real package or an ambiguity", err)
	case err == nil && (shown.Author != real.PK || shown.Version != "1.0.0"):
		t.Errorf("cap show did:nuwa:cap:note picked %s by %s, want 1.0.0 by the real author %s", shown.Version, shown.Author, real.PK)
	}

	if got := mcpResolve(t, n, "did:nuwa:cap:note"); got.Author != real.PK || got.Version != "1.0.0" {
		t.Errorf("MCP resolve_capability: %s by %s, want 1.0.0 by the real author %s", got.Version, got.Author, real.PK)
	}

	agent := n.installAgent(t)
	var ch struct {
		Cap struct{ Author, Version string } `json:"cap"`
	}
	out, err = n.cli(t, "", "agent", "cap", "install", agent, "did:nuwa:cap:note", "--json")
	if err != nil {
		t.Fatalf("agent cap install note: %v\n%s", err, out)
	}
	json.Unmarshal([]byte(out), &ch)
	if ch.Cap.Author != real.PK || ch.Cap.Version != "1.0.0" {
		t.Errorf("agent cap install note: %s by %s, want 1.0.0 by the real author", ch.Cap.Version, ch.Cap.Author)
	}

	// An unsigned file: the relay stores the event (a relay keeps what is
	// valid Nostr), but no node resolves or installs it.
	publishPackage(t, c, stranger.SK, registrytest.Spec{Name: "memo", Version: "1.0.0", Unsigned: true}, time.Now())
	out, err = n.cli(t, "", "agent", "cap", "install", agent, "did:nuwa:cap:memo")
	if err == nil || !strings.Contains(err.Error()+out, "memo") {
		t.Errorf("agent cap install of an unsigned package: %v\n%s, want a refusal", err, out)
	}
	// A file signed by another identity than the event's author.
	foreign := registrytest.Spec{Name: "todo", Version: "1.0.0", FileSigner: real.SK}
	if err := tryPublishPackage(c, stranger.SK, foreign, time.Now()); err == nil {
		if out, err := n.cli(t, "", "agent", "cap", "install", agent, "did:nuwa:cap:todo"); err == nil {
			t.Errorf("a package whose file is signed by another identity was installed:\n%s", out)
		}
	} else if !strings.Contains(err.Error(), "invalid:") {
		t.Errorf("publish of a foreign-signed package: %v, want OK or invalid:", err)
	}
}

// Item 12, state URI squatting. An unrelated capability declaring
// did:nuwa:state:kitchen#v2 first used to keep the real kitchen from ever
// bumping to it. Now kitchen takes its own name, and after that nobody
// else may declare a name in kitchen's namespace.
func TestRegistry_stateURISquatting(t *testing.T) {
	n := startNode(t, nil)
	author := testkit.NewKey(t)
	agent := n.installAgent(t)
	dir := t.TempDir()
	file := func(s registrytest.Spec) string {
		raw, err := registrytest.File(s, author.SK)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, s.Name+"-"+s.Version+".acp.yaml")
		if err := os.WriteFile(path, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	install := func(args ...string) (string, error) {
		return n.cli(t, "", append([]string{"agent", "cap"}, args...)...)
	}
	if out, err := install("install", agent, file(registrytest.Spec{Name: "squat", Version: "1.0.0", State: "did:nuwa:state:kitchen#v2"})); err != nil {
		t.Fatalf("install squat (declares kitchen#v2 before kitchen is here): %v\n%s", err, out)
	}
	if out, err := install("install", agent, file(registrytest.Spec{Name: "kitchen", Version: "1.0.0", State: "did:nuwa:state:kitchen#v1"})); err != nil {
		t.Fatalf("install kitchen@1.0.0: %v\n%s", err, out)
	}
	if out, err := install("upgrade", agent, "kitchen", "--file", file(registrytest.Spec{Name: "kitchen", Version: "2.0.0", State: "did:nuwa:state:kitchen#v2"})); err != nil {
		t.Fatalf("kitchen bumps to kitchen#v2, squatted by another capability: %v\n%s", err, out)
	}
	out, err := install("install", agent, file(registrytest.Spec{Name: "squat2", Version: "1.0.0", State: "did:nuwa:state:kitchen#v3"}))
	if err == nil || !strings.Contains(err.Error()+out, "namespace") {
		t.Fatalf("squat2 declares kitchen#v3 in kitchen's namespace: %v\n%s, want a refusal naming the namespace", err, out)
	}
}

// cli runs the binary as a CLI user with key sk against n; the error
// carries stderr.
func (n *node) cli(t *testing.T, sk string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "AGENTNODE_RELAY="+n.url, "AGENTNODE_NODE=http://"+n.addr,
		"AGENTNODE_DATA="+n.data, "AGENTNODE_KEY="+sk)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), &cliError{err: err, stderr: stderr.String()}
	}
	return stdout.String(), nil
}

type cliError struct {
	err    error
	stderr string
}

func (e *cliError) Error() string { return e.err.Error() + ": " + e.stderr }

// installAgent publishes a definition and installs an agent of it on n;
// it returns the agent's npub.
func (n *node) installAgent(t *testing.T) string {
	t.Helper()
	author, owner := testkit.NewKey(t), testkit.NewKey(t)
	out, err := n.cli(t, author.SK, "def", "publish", "--json", "--title", "Cook", "--role", "You cook.")
	if err != nil {
		t.Fatalf("def publish: %v", err)
	}
	var def nostr.Event
	if err := json.Unmarshal([]byte(out), &def); err != nil || def.ID == "" {
		t.Fatalf("def publish output: %v\n%s", err, out)
	}
	out, err = n.cli(t, "", "agent", "install", def.ID, "--owner", owner.PK, "--json")
	if err != nil {
		t.Fatalf("agent install: %v", err)
	}
	var res struct{ Npub string }
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Npub == "" {
		t.Fatalf("agent install output: %v\n%s", err, out)
	}
	return res.Npub
}

// publishPackage publishes s as a kind 30199 by sk at createdAt.
func publishPackage(t *testing.T, c interface {
	Publish(context.Context, *nostr.Event) error
}, sk string, s registrytest.Spec, createdAt time.Time) {
	t.Helper()
	if err := tryPublishPackage(c, sk, s, createdAt); err != nil {
		t.Fatalf("publish %s@%s: %v", s.Name, s.Version, err)
	}
}

func tryPublishPackage(c interface {
	Publish(context.Context, *nostr.Event) error
}, sk string, s registrytest.Spec, createdAt time.Time) error {
	evt, err := registrytest.Event(s, sk, createdAt.Unix())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.Publish(ctx, evt)
}

// resolved is the part of resolve_capability's answer the tests check.
type resolved struct {
	Author  string `json:"author"`
	Version string `json:"version"`
}

// mcpResolve calls the MCP tool resolve_capability on n's /mcp.
func mcpResolve(t *testing.T, n *node, ref string) resolved {
	t.Helper()
	url := "http://" + n.addr + "/mcp"
	resp, err := mcpPost(url, "", initializeBody)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("MCP initialize: %d", resp.StatusCode)
	}
	if resp, err = mcpPost(url, session, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	call, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call",
		"params": map[string]any{"name": "resolve_capability", "arguments": map[string]any{"cap_uri": ref}}})
	if resp, err = mcpPost(url, session, call); err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	body := buf.String()
	for _, line := range strings.Split(body, "\n") { // an SSE answer: the data line
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			body = data
		}
	}
	var msg struct {
		Result struct {
			Structured resolved `json:"structuredContent"`
			IsError    bool     `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &msg); err != nil || msg.Result.IsError {
		t.Fatalf("resolve_capability %s: %v\n%s", ref, err, body)
	}
	return msg.Result.Structured
}
