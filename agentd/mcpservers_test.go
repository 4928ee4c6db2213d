package agentd_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/capabilities/llm/llmtest"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
)

// mcpSandboxServer builds testdata/mcpsandbox (a go-sdk stdio MCP
// server) into a temporary directory.
func mcpSandboxServer(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mcpsandbox")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/mcpsandbox").CombinedOutput(); err != nil {
		t.Fatalf("build testdata/mcpsandbox: %v\n%s", err, out)
	}
	return bin
}

// mcpNode is a node with one agent and a stranger who announces servers.
type mcpNode struct {
	*node
	agent    agentd.Agent
	owner    key
	stranger key
}

func newMCPNode(t testing.TB, cfg agentd.Config) *mcpNode {
	n := openNode(t, cfg)
	owner := testkit.NewKey(t)
	def := n.definition(testkit.NewKey(t), reviewer())
	a := n.install(agentd.InstallRequest{Definition: def.ID, Owner: owner.PK}).Agent
	return &mcpNode{node: n, agent: a, owner: owner, stranger: testkit.NewKey(t)}
}

// announce publishes a kind 4200 signed by k.
func (m *mcpNode) announce(k key, s events.MCPServer) string {
	return m.publish(k.SK, s.Template()).ID
}

// call runs tool of capability capID with args and decodes the result.
func (m *mcpNode) call(capID, tool, args string, out any) {
	m.t.Helper()
	tc, _, err := m.d.Tools(context.Background(), m.agent.PubKey, capID)
	if err != nil {
		m.t.Fatalf("tools of %s: %v", capID, err)
	}
	res, err := tc.CallTool(context.Background(), tool, json.RawMessage(args))
	if err != nil {
		m.t.Fatalf("%s %s: %v", tool, args, err)
	}
	if err := json.Unmarshal(res, out); err != nil {
		m.t.Fatalf("%s: %s: %v", tool, res, err)
	}
}

func TestDaemon_MCPServerPendingApproveRunSandboxed(t *testing.T) {
	bin := mcpSandboxServer(t)
	t.Setenv("AGENTNODE_TEST_SECRET", "hunter2") // the node's environment: the server must not see it
	m := newMCPNode(t, agentd.Config{})
	ctx := context.Background()
	id := m.announce(m.stranger, events.MCPServer{Name: "Sandbox probe", Description: "reports its sandbox",
		Command: []string{bin, "--probe"}, Env: []string{"GREETING=hi"}})

	rec, err := m.d.AddMCPServer(ctx, m.agent.PubKey, agentd.MCPServerRequest{Server: id})
	if err != nil {
		t.Fatal(err)
	}
	if rec.State != agentd.MCPPending || rec.AuthorTrusted || rec.Slug != "Sandbox-probe" ||
		!slices.Equal(rec.Command, []string{bin, "--probe"}) || !slices.Equal(rec.EnvNames(), []string{"GREETING"}) {
		t.Fatalf("added: %+v, want pending, untrusted, the exact command and env names", rec)
	}
	if _, _, err := m.d.Tools(ctx, m.agent.PubKey, "mcp:"+rec.Slug); !errors.Is(err, agentd.ErrMCPServerNotApproved) {
		t.Fatalf("tools of a pending server: %v, want ErrMCPServerNotApproved", err)
	}
	if _, err := os.Stat(rec.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a pending server's dir exists (it ran?): %v", err)
	}
	if _, err := m.d.DecideMCPServer(ctx, m.agent.Name, rec.Slug, agentd.MCPDecision{Event: id, Approve: true}); !errors.Is(err, agentd.ErrUntrustedMCPServer) {
		t.Fatalf("approve an untrusted author's server without accepting: %v", err)
	}
	if _, err := m.d.DecideMCPServer(ctx, m.agent.Name, rec.Slug, agentd.MCPDecision{Event: strings.Repeat("0", 64), Approve: true, AcceptUntrusted: true}); !errors.Is(err, agentd.ErrMCPServerChanged) {
		t.Fatalf("approve another event: %v", err)
	}
	rec, err = m.d.DecideMCPServer(ctx, m.agent.Name, rec.Slug, agentd.MCPDecision{Event: id[:12], Approve: true, AcceptUntrusted: true})
	if err != nil || rec.State != agentd.MCPApproved {
		t.Fatalf("approve: %+v, %v", rec, err)
	}

	capID := "mcp:" + rec.Slug
	_, defs, err := m.d.Tools(ctx, m.agent.PubKey, capID)
	if err != nil {
		t.Fatal(err)
	}
	if names := slices.Sorted(slices.Values(toolNames(defs))); !slices.Equal(names, []string{"getenv", "self"}) {
		t.Fatalf("tools %v, want the server's getenv and self", names)
	}
	var env struct {
		Value string `json:"value"`
		Set   bool   `json:"set"`
	}
	m.call(capID, "getenv", `{"name":"AGENTNODE_TEST_SECRET"}`, &env)
	if env.Set {
		t.Errorf("the node's AGENTNODE_TEST_SECRET reached the server: %q", env.Value)
	}
	m.call(capID, "getenv", `{"name":"GREETING"}`, &env)
	if env.Value != "hi" {
		t.Errorf("GREETING = %q, want the 4200's env value hi", env.Value)
	}
	var self struct {
		Pid  int      `json:"pid"`
		Dir  string   `json:"dir"`
		Env  []string `json:"env"`
		Args []string `json:"args"`
	}
	m.call(capID, "self", `{}`, &self)
	checkSandboxed(t, self.Pid, self.Dir, self.Env, rec.Dir)
	if !slices.Equal(self.Args, []string{bin, "--probe"}) {
		t.Errorf("args %q, want the approved command", self.Args)
	}

	// A new event of the same server is pending again; the running one stops.
	id2 := m.announce(m.stranger, events.MCPServer{Name: "Sandbox probe", Command: []string{bin, "--probe", "--more"}})
	rec2, err := m.d.AddMCPServer(ctx, m.agent.PubKey, agentd.MCPServerRequest{Server: id2})
	if err != nil || rec2.State != agentd.MCPPending || rec2.EventID != id2 {
		t.Fatalf("changed server: %+v, %v; want pending on the new event", rec2, err)
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(self.Pid)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the replaced server (pid %d) still runs: %v", self.Pid, err)
	}
	if _, _, err := m.d.Tools(ctx, m.agent.PubKey, capID); !errors.Is(err, agentd.ErrMCPServerNotApproved) {
		t.Fatalf("tools of the changed server: %v, want ErrMCPServerNotApproved", err)
	}
}

func TestDaemon_MCPServerDeniedNeverRuns(t *testing.T) {
	m := newMCPNode(t, agentd.Config{})
	ctx := context.Background()
	marker := filepath.Join(t.TempDir(), "ran")
	// By the agent's owner (trusted), and still not run until approved.
	id := m.announce(m.owner, events.MCPServer{Name: "toucher", Command: []string{"/bin/sh", "-c", "touch " + marker}})
	rec, err := m.d.AddMCPServer(ctx, m.agent.PubKey, agentd.MCPServerRequest{Server: id})
	if err != nil || !rec.AuthorTrusted || rec.State != agentd.MCPPending {
		t.Fatalf("added: %+v, %v; want pending from a trusted author", rec, err)
	}
	rec, err = m.d.DecideMCPServer(ctx, m.agent.PubKey, "toucher", agentd.MCPDecision{Event: id, Approve: false})
	if err != nil || rec.State != agentd.MCPDenied {
		t.Fatalf("deny: %+v, %v", rec, err)
	}
	if _, _, err := m.d.Tools(ctx, m.agent.PubKey, "mcp:toucher"); !errors.Is(err, agentd.ErrMCPServerNotApproved) {
		t.Fatalf("tools of a denied server: %v", err)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the denied command ran: %v", err)
	}
	list, err := m.d.ListMCPServers(m.agent.Name)
	if err != nil || len(list) != 1 || list[0].State != agentd.MCPDenied {
		t.Fatalf("list: %+v, %v", list, err)
	}
}

// checkSandboxed: the server runs in dir with HOME = dir, sees only the
// allowed environment, leads its own process group and has the limits.
func checkSandboxed(t *testing.T, pid int, cwd string, env []string, dir string) {
	t.Helper()
	if cwd != dir {
		t.Errorf("working dir %q, want %q", cwd, dir)
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case k == "HOME" && v != dir:
			t.Errorf("HOME=%q, want %q", v, dir)
		case !slices.Contains([]string{"HOME", "PATH", "LANG", "GREETING"}, k):
			t.Errorf("the server's environment has %s: not on the allow-list", k)
		}
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); f[2] != strconv.Itoa(pid) {
		t.Errorf("process group %s, want its own (%d)", f[2], pid)
	}
	limits, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/limits")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`Max cpu time\s+3600\s+3600`, `Max address space\s+4294967296\s+4294967296`, `Max open files\s+256\s+256`, `Max processes\s+\d+\s+\d+`} {
		if !regexp.MustCompile(want).Match(limits) {
			t.Errorf("/proc/%d/limits lacks %s:\n%s", pid, want, limits)
		}
	}
}

// TestDaemon_MCPServerChat: an approved server is a capability the chat
// router switches to; the model calls its tool and gets its answer.
func TestDaemon_MCPServerChat(t *testing.T) {
	bin := mcpSandboxServer(t)
	srv := llmtest.NewServer(t, callTool("call_1", "getenv", `{"name":"GREETING"}`), answer("GREETING is hi."))
	m := newMCPNode(t, agentd.Config{Model: model(t, srv)})
	ctx := context.Background()
	id := m.announce(m.owner, events.MCPServer{Name: "probe", Command: []string{bin}, Env: []string{"GREETING=hi"}})
	if _, err := m.d.AddMCPServer(ctx, m.agent.PubKey, agentd.MCPServerRequest{Server: id}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.d.DecideMCPServer(ctx, m.agent.PubKey, "probe", agentd.MCPDecision{Event: id, Approve: true}); err != nil {
		t.Fatal(err)
	}
	reply, err := m.d.Chat(ctx, m.agent.PubKey, "c1", "/switch mcp:probe what is GREETING?")
	if err != nil {
		t.Fatal(err)
	}
	if reply.Capability != "mcp:probe" || reply.Answer != "GREETING is hi." || len(reply.ToolCalls) != 1 || reply.ToolCalls[0].ErrorCode != "" {
		t.Fatalf("reply = %+v", reply)
	}
	reqs := srv.Requests()
	if got := reqs[0].ToolNames(); !slices.Equal(slices.Sorted(slices.Values(got)), []string{"getenv", "self"}) {
		t.Errorf("offered tools %v, want the server's", got)
	}
	if last := reqs[1].Last(); last.Content == nil || !strings.Contains(*last.Content, `"value":"hi"`) {
		t.Errorf("the tool result the model got: %+v", last)
	}

	// Removing the agent stops its server and removes its records and dir.
	var self struct {
		Pid int `json:"pid"`
	}
	m.call("mcp:probe", "self", `{}`, &self)
	if _, err := m.d.Remove(ctx, m.agent.PubKey, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(self.Pid)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the removed agent's server (pid %d) still runs: %v", self.Pid, err)
	}
	if _, err := os.Stat(filepath.Join(m.dir, "agents", m.agent.PubKey, "mcp")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the removed agent's MCP dir stays: %v", err)
	}
}
