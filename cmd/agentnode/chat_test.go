package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/capabilities/llm"
	"github.com/agentnode/agentnode/capabilities/llm/llmtest"
	"github.com/agentnode/agentnode/internal/testkit"
)

// chatCLI runs `agentnode chat` with stdin.
func chatCLI(t *testing.T, n *agentNode, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	env := n.env("")
	m := &Main{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := m.Run(ctx, append([]string{"chat"}, args...))
	return result{out.String(), errb.String(), err}
}

func scriptedModel(t *testing.T, steps ...llmtest.Step) (*llmtest.Server, *llm.Client) {
	t.Helper()
	srv := llmtest.NewServer(t, steps...)
	c, err := llm.New(llm.Config{BaseURL: srv.BaseURL(), Model: "scripted"})
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

func reply(text string) llmtest.Step {
	return func(llmtest.Request) llmtest.Reply { return llmtest.Answer(text) }
}

func TestChat_OneShotAndInteractive(t *testing.T) {
	srv, model := scriptedModel(t,
		func(llmtest.Request) llmtest.Reply {
			return llmtest.Call(llmtest.ToolCall("c1", "state_create",
				`{"schema_uri":"did:nuwa:state:note#v1","object":{"id":"11111111-1111-4111-8111-111111111111","title":"milk","body":"buy milk","tags":[],"createdAt":"2026-01-01T00:00:00Z","updatedAt":"2026-01-01T00:00:00Z"}}`))
		},
		reply("Noted: milk."), reply("Hello!"), reply("Still here."))
	n := openCapAgentNode(t, model)
	agent := n.installAgent(t)
	authorSK := testkit.NewKey(t).SK
	n.run(t, "", "agent", "cap", "install", agent, notePackageFile(t, t.TempDir(), "1.0.0", authorSK))

	r := chatCLI(t, n, "", agent, "-m", "add a note: buy milk")
	if r.err != nil || strings.TrimSpace(r.stdout) != "[note] Noted: milk." || !strings.Contains(r.stderr, "[tool state.create: ok]") {
		t.Fatalf("one-shot: %v\nstdout: %s\nstderr: %s", r.err, r.stdout, r.stderr)
	}

	r = chatCLI(t, n, "hello\n\n/back\nanything else\n/quit\nnever sent\n", agent, "--conversation", "c2")
	if r.err != nil {
		t.Fatalf("interactive: %v\n%s", r.err, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 || lines[0] != "Hello!" || !strings.Contains(lines[1], "Nothing to go back from") || lines[2] != "Still here." {
		t.Fatalf("interactive output:\n%s", r.stdout)
	}
	if got := len(srv.Requests()); got != 4 {
		t.Fatalf("the model got %d requests, want 4 (nothing after /quit, nothing for /back)", got)
	}
}

func TestChat_NoModel(t *testing.T) {
	n := openCapAgentNode(t, nil)
	agent := n.installAgent(t)
	r := chatCLI(t, n, "", agent, "-m", "hello")
	if r.err == nil || exitCode(r.err) != 1 || !strings.Contains(r.err.Error(), "no model configured") || !strings.Contains(r.err.Error(), llm.EnvModel) {
		t.Fatalf("without a model: %v", r.err)
	}
	r = chatCLI(t, n, "hello\n", agent)
	if r.err == nil || !strings.Contains(r.err.Error(), llm.EnvBaseURL) {
		t.Fatalf("interactive without a model: %v", r.err)
	}
}

// TestChat_Serve runs the whole path through `agentnode serve` as wired
// (state runtime, model from the environment): install a capability from a
// signed file, chat, and the note is in <data>/state.db.
func TestChat_Serve(t *testing.T) {
	srv := llmtest.NewServer(t,
		func(llmtest.Request) llmtest.Reply {
			return llmtest.Call(llmtest.ToolCall("c1", "state_create",
				`{"schema_uri":"did:nuwa:state:note#v1","object":{"id":"22222222-2222-4222-8222-222222222222","title":"served","body":"b","tags":[],"createdAt":"2026-01-01T00:00:00Z","updatedAt":"2026-01-01T00:00:00Z"}}`))
		},
		reply("Saved through serve."))
	dir := t.TempDir()
	env := map[string]string{llm.EnvBaseURL: srv.BaseURL(), llm.EnvModel: "scripted"}
	m := &Main{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(k string) string { return env[k] }}
	c := &ServeCommand{m: m}
	if err := c.ParseFlags([]string{"--listen", "127.0.0.1:0", "--data", dir, "--log-level", "error"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := c.Open(ctx); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- c.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-served
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer ccancel()
		c.Close(cctx)
	})
	n := &agentNode{relay: c.relay, d: c.daemon, dir: dir, http: "http://" + c.Addr(), ws: "ws://" + c.Addr()}
	agent := n.installAgent(t)
	authorSK := testkit.NewKey(t).SK
	n.run(t, "", "agent", "cap", "install", agent, notePackageFile(t, t.TempDir(), "1.0.0", authorSK))

	r := chatCLI(t, n, "", agent, "-m", "a note: served")
	if r.err != nil || strings.TrimSpace(r.stdout) != "[note] Saved through serve." {
		t.Fatalf("chat through serve: %v\nstdout: %s\nstderr: %s", r.err, r.stdout, r.stderr)
	}
	owner := state.Caller{Owner: c.daemon.List()[0].Owner, Verbs: state.AllVerbs}
	res, err := c.State().Query(context.Background(), owner, []byte(`{"from":"did:nuwa:state:note#v1","select":["title"]}`))
	if err != nil || len(res.Rows) != 1 || res.Rows[0]["title"] != "served" {
		t.Fatalf("the note in serve's state.db: %+v, %v", res, err)
	}
}
