package agentd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/bindings"
	"github.com/agentnode/agentnode/capabilities/cap"
	"github.com/agentnode/agentnode/capabilities/llm/llmtest"
)

// End to end: a signed package whose tools are mcp_service bindings to the
// reference MCP server (@modelcontextprotocol/server-everything, pinned in
// interop/package.json) over stdio, installed on an agent of a real daemon
// (relay, state.db, bindings.Runner), run through CAP and the model loop.

const (
	everythingCapID = "did:nuwa:cap:everything@1.0.0"
	everythingEcho  = cap.CapURIPrefix + "everything/echo"
	everythingSum   = cap.CapURIPrefix + "everything/get_sum"
)

// everythingCommand is server-everything's stdio argv; the test skips when
// interop/node_modules does not have it (make test installs it).
func everythingCommand(t *testing.T) []string {
	t.Helper()
	dir, err := filepath.Abs("../interop/node_modules/@modelcontextprotocol/server-everything")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("the reference MCP server is not installed (run `cd interop && npm ci`, as make test does): %v", err)
	}
	script := filepath.Join(dir, "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("server-everything is installed but has no dist/index.js: %v", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("server-everything is installed but node is not on PATH: %v", err)
	}
	return []string{node, script, "stdio"}
}

// openMCPNode is a daemon whose bindings map mcp://everything to the
// reference server, with the everything package installed on its agent.
func openMCPNode(t *testing.T, cfg agentd.Config) *capsNode {
	t.Helper()
	r := bindings.New(bindings.Config{MCP: map[string]bindings.MCPEndpoint{
		"mcp://everything": {Command: everythingCommand(t)},
	}})
	t.Cleanup(func() { r.Close() })
	cfg.Bindings = r
	cn := openCapsNode(t, cfg)
	raw, err := os.ReadFile("testdata/everything_mcp.acp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if ch := cn.installFile(sign(t, raw, cn.author.SK)); !ch.Changed || ch.Cap.ID != everythingCapID {
		t.Fatalf("install: %+v", ch)
	}
	return cn
}

// sameJSON fails unless got and want are equal JSON values.
func sameJSON(t *testing.T, what string, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %q is not JSON: %v", what, got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if !bytes.Equal(gb, wb) {
		t.Errorf("%s = %s, want %s", what, gb, wb)
	}
}

func TestE2E_MCPEverything_CAPInvoke(t *testing.T) {
	cn := openMCPNode(t, agentd.Config{})
	h := cap.NewHost(cn.d.CapSource(), cap.Options{})
	ctx := context.Background()

	list, err := h.List(ctx, cn.agent.Npub)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range list {
		ids = append(ids, m.CapabilityID)
	}
	for _, id := range []string{everythingEcho, everythingSum} {
		if !slices.Contains(ids, id) {
			t.Fatalf("capabilities %v lack %s", ids, id)
		}
	}

	tests := []struct {
		name, id, input, want string
	}{
		{"echo", everythingEcho, `{"message":"hello through CAP"}`, `{"content":[{"type":"text","text":"Echo: hello through CAP"}]}`},
		{"get-sum", everythingSum, `{"a":2,"b":40}`, `{"content":[{"type":"text","text":"The sum of 2 and 40 is 42."}]}`},
		{"get-sum fractions", everythingSum, `{"a":1.5,"b":-4}`, `{"content":[{"type":"text","text":"The sum of 1.5 and -4 is -2.5."}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := h.Invoke(ctx, cn.agent.Npub, cap.Ref{CapabilityID: tt.id, Version: "1.0.0"}, json.RawMessage(tt.input))
			if !res.OK || res.Error != nil || res.DurationMS < 0 {
				t.Fatalf("invoke %s: %+v (error %v)", tt.id, res, res.Error)
			}
			sameJSON(t, "output", res.Output, tt.want)
			wire, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			var shape map[string]json.RawMessage
			if err := json.Unmarshal(wire, &shape); err != nil {
				t.Fatal(err)
			}
			if string(shape["ok"]) != "true" || string(shape["error"]) != "null" || shape["duration_ms"] == nil {
				t.Errorf("InvokeResult on the wire = %s", wire)
			}
		})
	}
}

func TestE2E_MCPEverything_CAPInvalidInput(t *testing.T) {
	cn := openMCPNode(t, agentd.Config{})
	h := cap.NewHost(cn.d.CapSource(), cap.Options{})
	ctx := context.Background()
	tests := []struct {
		name, id, input, where string
	}{
		{"string for a number", everythingSum, `{"a":"two","b":40}`, "/a"},
		{"missing b", everythingSum, `{"a":2}`, "b"},
		{"number for a string", everythingEcho, `{"message":7}`, "/message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := h.Invoke(ctx, cn.agent.Npub, cap.Ref{CapabilityID: tt.id}, json.RawMessage(tt.input))
			if res.OK || res.Output != nil || res.Error == nil || res.Error.Code != capabilities.CodeInvalidInput {
				t.Fatalf("invoke %s %s: %+v, want INVALID_INPUT", tt.id, tt.input, res)
			}
			if !strings.Contains(res.Error.Message, tt.where) {
				t.Errorf("message %q does not say where (%s)", res.Error.Message, tt.where)
			}
		})
	}
	// The refusals came from the host's input check: a valid call after
	// them still reaches the server.
	res := h.Invoke(ctx, cn.agent.Npub, cap.Ref{CapabilityID: everythingSum}, json.RawMessage(`{"a":1,"b":1}`))
	if !res.OK {
		t.Fatalf("a valid call after the refused ones: %+v", res)
	}
	sameJSON(t, "output", res.Output, `{"content":[{"type":"text","text":"The sum of 1 and 1 is 2."}]}`)
}

// callTool is a scripted model turn that calls one tool.
func callTool(id, name, args string) llmtest.Step {
	return func(llmtest.Request) llmtest.Reply { return llmtest.Call(llmtest.ToolCall(id, name, args)) }
}

func TestE2E_MCPEverything_ModelLoop(t *testing.T) {
	srv := llmtest.NewServer(t,
		callTool("call_echo", "echo", `{"message":"hello through the model"}`),
		callTool("call_sum", "get_sum", `{"a":19,"b":23}`),
		answer("The server echoed and says 19 + 23 = 42."))
	cn := openMCPNode(t, agentd.Config{Model: model(t, srv)})

	reply, err := cn.d.Chat(context.Background(), cn.agent.Npub, "c1", "ask everything to echo and add")
	if err != nil {
		t.Fatal(err)
	}
	if reply.Answer != "The server echoed and says 19 + 23 = 42." || reply.Capability != everythingCapID || reply.Steps != 3 {
		t.Fatalf("reply = %+v", reply)
	}
	var names []string
	for _, c := range reply.ToolCalls {
		if c.ErrorCode != "" {
			t.Errorf("tool call %s failed: %s %s", c.Name, c.ErrorCode, c.Result)
		}
		names = append(names, c.Name)
	}
	if !slices.Equal(names, []string{"echo", "get_sum"}) {
		t.Fatalf("tool calls = %v, want [echo get_sum]", names)
	}

	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	if got := reqs[0].ToolNames(); !slices.Contains(got, "echo") || !slices.Contains(got, "get_sum") {
		t.Errorf("offered tools = %v", got)
	}
	wantResults := []struct{ id, result string }{
		{"call_echo", `{"content":[{"type":"text","text":"Echo: hello through the model"}]}`},
		{"call_sum", `{"content":[{"type":"text","text":"The sum of 19 and 23 is 42."}]}`},
	}
	for i, w := range wantResults {
		last := reqs[i+1].Last()
		if last.Role != "tool" || last.ToolCallID != w.id || last.Content == nil {
			t.Fatalf("request %d's last message = %+v, want the tool result of %s", i+2, last, w.id)
		}
		sameJSON(t, "tool result "+w.id, []byte(*last.Content), w.result)
	}
}
