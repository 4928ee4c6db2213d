package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/capabilities/llm/llmtest"
	"github.com/agentnode/agentnode/internal/testkit"
)

// End to end: nuwa_a2a between two served nodes on loopback. Node B runs an
// agent with the note capability; node A (--peer B) runs an agent whose
// remote-note capability binds remote_note as nuwa_a2a to "{agent}" /
// state.create. A's call travels as kind 25910 over B's relay, B's agentRPC
// runs state.create as B's note capability, and the document lands in B's
// state.db.

const remoteNoteCap = "did:nuwa:cap:remote-note@1.0.0"

// a2aNode is a served node with one installed agent.
type a2aNode struct {
	*servedNode
	agent agentd.Installed
}

// waitServing returns once n answers HTTP: Serve has started its runtime
// (the 25910 client and server, the DM service) before it serves, so
// agents installed and called after this meet a running node.
func waitServing(t *testing.T, n *servedNode) *servedNode {
	t.Helper()
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := client.Get("http://" + n.Addr() + "/")
		if err == nil {
			resp.Body.Close()
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s does not serve: %v", n.Addr(), err)
		}
	}
}

// installServedAgent installs an agent (a fresh definition and owner) on n.
func installServedAgent(t *testing.T, n *servedNode, title string) a2aNode {
	t.Helper()
	authorSK := testkit.NewKey(t).SK
	owner := testkit.NewKey(t).PK
	def := n.publish(t, authorSK, nostr.Event{Kind: 4199, Tags: nostr.Tags{{"title", title}, {"role", "You help."}}})
	inst, err := n.Daemon().Install(context.Background(), agentd.InstallRequest{Definition: def.ID, Owner: owner})
	if err != nil {
		t.Fatal(err)
	}
	return a2aNode{servedNode: n, agent: inst}
}

// installSigned signs raw with a fresh author key and installs it on the agent.
func (n a2aNode) installSigned(t *testing.T, raw []byte) agentd.CapChange {
	t.Helper()
	sk := testkit.NewKey(t).SK
	signedRaw, err := acp.SignAs(raw, sk, acp.SigFormNostr)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := n.Daemon().InstallCap(context.Background(), n.agent.Npub, agentd.CapInstallRequest{YAML: string(signedRaw)})
	if err != nil {
		t.Fatalf("install: %v", err)
	}
	return ch
}

// configFile writes a serve --config file holding sections.
func configFile(t *testing.T, sections map[string]any) string {
	t.Helper()
	b, err := json.Marshal(sections)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "serve.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// modelSection is the --config "model" section naming the scripted model.
func modelSection(srv *llmtest.Server) map[string]string {
	return map[string]string{"base_url": srv.BaseURL(), "model": "scripted"}
}

// startCaller starts A: --peer b, the scripted model, an agent with the
// remote-note capability.
func startCaller(t *testing.T, b a2aNode, srv *llmtest.Server) a2aNode {
	t.Helper()
	cfg := configFile(t, map[string]any{"model": modelSection(srv)})
	a := installServedAgent(t, waitServing(t, startServe(t, "--peer", "ws://"+b.Addr(), "--config", cfg)), "Remote Writer")
	raw, err := os.ReadFile("testdata/a2a_remote_note.acp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if ch := a.installSigned(t, raw); ch.Cap.ID != remoteNoteCap {
		t.Fatalf("install on A: %+v", ch)
	}
	return a
}

// startA2APair starts B (note capability) and A (--peer B, remote-note
// capability, the scripted model).
func startA2APair(t *testing.T, srv *llmtest.Server) (a, b a2aNode) {
	t.Helper()
	b = installServedAgent(t, waitServing(t, startServe(t)), "Note Keeper")
	raw, err := os.ReadFile(notePackageFile(t, t.TempDir(), "1.0.0", ""))
	if err != nil {
		t.Fatal(err)
	}
	b.installSigned(t, raw)
	b.openNotes(t) // A's agent is a stranger to B's owner
	return startCaller(t, b, srv), b
}

// noteArgs are remote_note's arguments: B's agent and a note titled title.
func noteArgs(target, id, title string) string {
	return `{"agent":"` + target + `","schema_uri":"did:nuwa:state:note#v1","object":{"id":"` + id +
		`","title":"` + title + `","body":"sent from A","tags":[],"createdAt":"2026-01-01T00:00:00Z","updatedAt":"2026-01-01T00:00:00Z"}}`
}

// notesOn returns the note titles in n's state.db, by id.
func notesOn(t *testing.T, n a2aNode) map[string]string {
	t.Helper()
	owner := state.Caller{Owner: n.agent.Agent.Owner, Verbs: state.AllVerbs}
	res, err := n.State().Query(context.Background(), owner, []byte(`{"from":"did:nuwa:state:note#v1","select":["id","title"]}`))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, row := range res.Rows {
		id, _ := row["id"].(string)
		title, _ := row["title"].(string)
		out[id] = title
	}
	return out
}

// createdID is the id in a state.create result.
func createdID(t *testing.T, result []byte) string {
	t.Helper()
	var doc struct {
		ID     string `json:"id"`
		Object struct {
			ID string `json:"id"`
		} `json:"object"`
	}
	if err := json.Unmarshal(result, &doc); err != nil {
		t.Fatalf("the result %q is not a state document: %v", result, err)
	}
	if doc.ID != "" {
		return doc.ID
	}
	return doc.Object.ID
}

func TestA2A_E2E_ExecutorCallsAgentOnPeer(t *testing.T) {
	a, b := startA2APair(t, llmtest.NewServer(t))
	// A call that never reaches B ends as TIMEOUT here instead of hanging.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tools, defs, err := a.Daemon().Tools(ctx, a.agent.Npub, "remote-note")
	if err != nil {
		t.Fatal(err)
	}
	if len(defs) != 3 {
		t.Fatalf("tools on A = %+v", defs)
	}

	const id = "33333333-3333-4333-8333-333333333333"
	out, err := tools.CallTool(ctx, "remote_note", []byte(noteArgs(b.agent.Npub, id, "from the executor")))
	if err != nil {
		t.Fatalf("remote_note: %v", err)
	}
	if got := createdID(t, out); got != id || !strings.Contains(string(out), "from the executor") {
		t.Fatalf("B's answer = %s, want the created note %s", out, id)
	}
	if got := notesOn(t, b); got[id] != "from the executor" || len(got) != 1 {
		t.Fatalf("notes in B's state.db = %v", got)
	}

	_, err = tools.CallTool(ctx, "remote_missing", []byte(`{"agent":"`+b.agent.Npub+`"}`))
	if code := capabilities.CodeOf(err); code != capabilities.CodeNotFound || !strings.Contains(err.Error(), "method not found") {
		t.Fatalf("a method B does not have: %v (code %s), want NOT_FOUND", err, code)
	}
	_, err = tools.CallTool(ctx, "remote_note", []byte(`{"agent":"not-an-agent","schema_uri":"did:nuwa:state:note#v1","object":{}}`))
	if code := capabilities.CodeOf(err); code != capabilities.CodeInvalidInput {
		t.Fatalf("a malformed target: %v (code %s), want INVALID_INPUT", err, code)
	}
}

func TestA2A_E2E_ChatCallsAgentOnPeer(t *testing.T) {
	const id = "44444444-4444-4444-8444-444444444444"
	var target string // B's agent, known once B runs
	srv := llmtest.NewServer(t,
		func(llmtest.Request) llmtest.Reply {
			return llmtest.Call(llmtest.ToolCall("call_remote", "remote_note", noteArgs(target, id, "from the model")))
		},
		reply("Saved on the other agent."))
	a, b := startA2APair(t, srv)
	target = b.agent.Npub

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := a.Daemon().Chat(ctx, a.agent.Npub, "c1", "please save a remote note: from the model")
	if err != nil {
		t.Fatal(err)
	}
	if r.Answer != "Saved on the other agent." || r.Capability != remoteNoteCap || r.Steps != 2 {
		t.Fatalf("reply = %+v", r)
	}
	if len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "remote_note" || r.ToolCalls[0].ErrorCode != "" {
		t.Fatalf("tool calls = %+v", r.ToolCalls)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	last := reqs[1].Last()
	if last.Role != "tool" || last.ToolCallID != "call_remote" || last.Content == nil {
		t.Fatalf("the tool message = %+v", last)
	}
	if got := createdID(t, []byte(*last.Content)); got != id || !strings.Contains(*last.Content, "from the model") {
		t.Fatalf("the tool result the model got = %s, want B's created note %s", *last.Content, id)
	}
	if got := notesOn(t, b); got[id] != "from the model" || len(got) != 1 {
		t.Fatalf("notes in B's state.db = %v", got)
	}
}

// everythingArgv is the stdio command of the reference MCP server
// (@modelcontextprotocol/server-everything, pinned in interop/package.json);
// the test skips when interop/node_modules does not have it.
func everythingArgv(t *testing.T) []string {
	t.Helper()
	script, err := filepath.Abs("../../interop/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		t.Skipf("the reference MCP server is not installed (run `cd interop && npm ci`, as make test does): %v", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("server-everything is installed but node is not on PATH: %v", err)
	}
	return []string{node, script, "stdio"}
}

// TestA2A_E2E_PeerRunsMCPTool chains both bindings across two served
// nodes: A's remote_echo (nuwa_a2a) calls echo on B's agent, whose
// everything capability binds echo as mcp_service to the server B's
// --config "bindings.mcp" section names.
func TestA2A_E2E_PeerRunsMCPTool(t *testing.T) {
	cfg := configFile(t, map[string]any{"bindings": map[string]any{
		"mcp": map[string]any{"mcp://everything": map[string]any{"command": everythingArgv(t)}}}})
	b := installServedAgent(t, waitServing(t, startServe(t, "--config", cfg)), "MCP Host")
	raw, err := os.ReadFile("../../agentd/testdata/everything_mcp.acp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b.installSigned(t, raw)
	a := startCaller(t, b, llmtest.NewServer(t))

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tools, _, err := a.Daemon().Tools(ctx, a.agent.Npub, "remote-note")
	if err != nil {
		t.Fatal(err)
	}
	out, err := tools.CallTool(ctx, "remote_echo", []byte(`{"agent":"`+b.agent.Npub+`","message":"across two nodes"}`))
	if err != nil {
		t.Fatalf("remote_echo: %v", err)
	}
	var got, want any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("remote_echo returned %q: %v", out, err)
	}
	if err := json.Unmarshal([]byte(`{"content":[{"type":"text","text":"Echo: across two nodes"}]}`), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("remote_echo = %s, want the MCP server's echo through B", out)
	}
}
