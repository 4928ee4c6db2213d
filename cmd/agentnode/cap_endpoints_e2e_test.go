package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/cap"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
)

// The capability endpoints of a real served node: /mcp (the registry, no
// token), /mcp/agents/{agent} (the agent's capabilities as MCP tools, with
// the token) and /cap/agents/{agent} (CAP over JSON-RPC, HTTP POST and
// WebSocket, with the token). docs/CAP.md, docs/REGISTRY.md.

const (
	noteSchema     = "did:nuwa:state:note#v1"
	noteCreateCap  = "did:nuwa:cap:note/state.create"
	noteCreateTool = "note__state.create" // its MCP alias
)

// noteObject is a valid note of the note package's schema.
func noteObject(id, title string) map[string]any {
	return map[string]any{"id": id, "title": title, "body": "written over an endpoint", "tags": []string{"e2e"},
		"createdAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-01T00:00:00Z"}
}

// noteInput is state.create's input for a valid note.
func noteInput(id, title string) map[string]any {
	return map[string]any{"schema_uri": noteSchema, "object": noteObject(id, title)}
}

// waitNote waits until n's state.db has the note id titled title.
func waitNote(t *testing.T, n endpointNode, id, title string) {
	t.Helper()
	testkit.WaitFor(t, e2eWait, "note "+id+" in the state.db", func() bool { return notesOn(t, n.a2aNode)[id] == title })
}

// TestMCPEndpoints_E2E: a package published with `agentnode cap publish`
// is resolved and found over /mcp by the go-sdk client; installed on the
// agent with `agentnode agent cap install`, its tools are the agent's MCP
// tools at /mcp/agents/{agent}, and calling state.create writes the note
// into the node's state.db. Without the token the agent's endpoint refuses.
func TestMCPEndpoints_E2E(t *testing.T) {
	n := startEndpointNode(t, "Note Keeper")
	authorKey := testkit.NewKey(t)
	authorSK, authorPK := authorKey.SK, authorKey.PK
	path := notePackageFile(t, t.TempDir(), "1.0.0", authorSK)

	env := n.env()
	env["AGENTNODE_KEY"] = authorSK
	if out := mustCLI(t, env, "cap", "publish", path); !strings.Contains(out, "published kind 30199 event ") {
		t.Fatalf("cap publish:\n%s", out)
	}
	stored, err := n.relay.QuerySync(context.Background(), nostr.Filter{Kinds: []int{events.KindCapability}, Authors: []string{authorPK}})
	if err != nil || len(stored) != 1 {
		t.Fatalf("published packages on the node: %d, %v", len(stored), err)
	}

	reg, err := mcpConnect(t, n.url("/mcp"), "")
	if err != nil {
		t.Fatalf("/mcp without a token: %v", err)
	}
	if got := mcpToolNames(t, reg); !slices.Equal(sorted(got), []string{"resolve_capability", "search_capabilities"}) {
		t.Fatalf("/mcp tools = %v", got)
	}
	var out map[string]any
	testkit.WaitFor(t, e2eWait, "the registry to index the package", func() bool {
		res, o := mcpCall(t, reg, "resolve_capability", map[string]any{"cap_uri": "did:nuwa:cap:note"})
		out = o
		return !res.IsError
	})
	if out["event_id"] != stored[0].ID || out["author"] != authorPK || out["version"] != "1.0.0" ||
		!strings.HasPrefix(out["naddr"].(string), "naddr1") {
		t.Fatalf("resolve_capability = %v; want the published event %s by %s", out, stored[0].ID, authorPK)
	}
	if res, _ := mcpCall(t, reg, "resolve_capability", map[string]any{"cap_uri": "did:nuwa:cap:missing"}); !res.IsError ||
		!strings.Contains(textOf(res), "not found") {
		t.Fatalf("resolve a missing package: isError %v %q", res.IsError, textOf(res))
	}
	_, out = mcpCall(t, reg, "search_capabilities", map[string]any{"query_string": "personal notes"})
	results, _ := out["results"].([]any)
	if len(results) != 1 || results[0].(map[string]any)["event_id"] != stored[0].ID {
		t.Fatalf("search_capabilities = %v; want the published package", out)
	}
	_, out = mcpCall(t, reg, "search_capabilities", map[string]any{"query_string": "", "filters": map[string]any{"tool": "state.create"}})
	if results, _ := out["results"].([]any); len(results) != 1 {
		t.Fatalf("search_capabilities by tool = %v", out)
	}

	if out := mustCLI(t, n.env(), "agent", "cap", "install", n.agent.Npub, path); !strings.Contains(out, "installed did:nuwa:cap:note@1.0.0") {
		t.Fatalf("agent cap install:\n%s", out)
	}
	agentURL := n.url("/mcp/agents/" + n.agentPK())
	for _, tok := range []string{"", "wrong"} {
		if _, err := mcpConnect(t, agentURL, tok); err == nil {
			t.Fatalf("/mcp/agents/{agent} with token %q: connected, want refused", tok)
		}
	}
	if status, _ := postJSON(t, agentURL, "", rpcRequest(1, "tools/list", nil)); status != http.StatusUnauthorized {
		t.Fatalf("POST /mcp/agents/{agent} without the token: %d, want 401", status)
	}
	cs, err := mcpConnect(t, agentURL, n.token)
	if err != nil {
		t.Fatalf("/mcp/agents/{agent} with the token: %v", err)
	}
	if got := mcpToolNames(t, cs); !slices.Contains(got, "note") || !slices.Contains(got, noteCreateTool) ||
		!slices.Contains(got, "note__state.query") {
		t.Fatalf("the agent's MCP tools = %v; want the note skill and its tools", got)
	}
	const id = "55555555-5555-4555-8555-555555555555"
	res, out := mcpCall(t, cs, noteCreateTool, noteInput(id, "over MCP"))
	if res.IsError || out["ok"] != true {
		t.Fatalf("%s: isError %v %q %v", noteCreateTool, res.IsError, textOf(res), out)
	}
	waitNote(t, n, id, "over MCP")
	res, out = mcpCall(t, cs, noteCreateTool, map[string]any{"schema_uri": noteSchema, "object": map[string]any{"title": 7}})
	if errObj, _ := out["error"].(map[string]any); !res.IsError || errObj["code"] != capabilities.CodeInvalidInput {
		t.Fatalf("%s with a bad note: isError %v %v; want INVALID_INPUT", noteCreateTool, res.IsError, out)
	}
}

// capCall is one CAP call over some transport.
type capCall func(t *testing.T, method string, params any) rpcReply

// invokeResult is CAP's InvokeResult.
type invokeResult struct {
	OK     bool            `json:"ok"`
	Output json.RawMessage `json:"output"`
	Error  *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	DurationMS *int64 `json:"duration_ms"`
}

// TestCAPEndpoint_E2E: capability.list, describe and invoke for the
// agent's installed note package at /cap/agents/{agent}, over HTTP POST
// and over a WebSocket; without the token, 401.
func TestCAPEndpoint_E2E(t *testing.T) {
	n := startEndpointNode(t, "Note Keeper")
	raw := mustReadFile(t, notePackageFile(t, t.TempDir(), "1.0.0", ""))
	n.installSigned(t, raw)
	path := "/cap/agents/" + n.agentPK()

	if status, body := postJSON(t, n.url(path), "", rpcRequest(1, "capability.list", map[string]any{})); status != http.StatusUnauthorized {
		t.Fatalf("capability.list without the token: %d %s, want 401", status, body)
	}
	if _, resp, err := dialWS(t, n.wsURL(path), ""); err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("ws %s without the token: %v; want refused with 401", path, err)
	}

	overHTTP := func(t *testing.T, method string, params any) rpcReply {
		t.Helper()
		return rpcPost(t, n.url(path), n.token, method, params)
	}
	conn, _, err := dialWS(t, n.wsURL(path), n.token)
	if err != nil {
		t.Fatalf("ws %s: %v", path, err)
	}
	overWS := func(t *testing.T, method string, params any) rpcReply {
		t.Helper()
		return wsCall(t, conn, method, params)
	}
	for _, tc := range []struct {
		name, id string
		call     capCall
	}{
		{"http", "66666666-6666-4666-8666-666666666666", overHTTP},
		{"websocket", "77777777-7777-4777-8777-777777777777", overWS},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkCAP(t, tc.call)
			checkCAPInvoke(t, n, tc.call, tc.id, "over CAP "+tc.name)
		})
	}
}

// checkCAP: list names the note package's skill and tools; describe finds
// a tool and answers NOT_FOUND (cap.CodeNotFound, data.cap_code) for an unknown id.
func checkCAP(t *testing.T, call capCall) {
	t.Helper()
	var list []struct {
		ID      string `json:"capability_id"`
		Version string `json:"version"`
		Kind    string `json:"kind"`
	}
	mustResult(t, "capability.list", call(t, "capability.list", map[string]any{}), &list)
	var ids []string
	for _, m := range list {
		ids = append(ids, m.ID+"@"+m.Version+":"+m.Kind)
	}
	for _, want := range []string{"did:nuwa:cap:note@1.0.0:skill", noteCreateCap + "@1.0.0:tool", "did:nuwa:cap:note/state.query@1.0.0:tool"} {
		if !slices.Contains(ids, want) {
			t.Fatalf("capability.list = %v; want %s", ids, want)
		}
	}

	var m struct {
		ID          string          `json:"capability_id"`
		Kind        string          `json:"kind"`
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	mustResult(t, "capability.describe", call(t, "capability.describe", map[string]any{"capability_id": noteCreateCap, "version": "1.0.0"}), &m)
	if m.ID != noteCreateCap || m.Kind != "tool" || m.Name != "state.create" || !strings.Contains(string(m.InputSchema), `"createdAt"`) {
		t.Fatalf("capability.describe = %+v %s", m, m.InputSchema)
	}
	r := call(t, "capability.describe", map[string]any{"capability_id": "did:nuwa:cap:nothing/here", "version": ""})
	var data struct {
		CapCode string `json:"cap_code"`
	}
	if r.Error == nil || r.Error.Code != cap.CodeNotFound || json.Unmarshal(r.Error.Data, &data) != nil || data.CapCode != capabilities.CodeNotFound {
		t.Fatalf("describe an unknown id = %s %+v; want cap.CodeNotFound with cap_code NOT_FOUND", r.Result, r.Error)
	}
}

// checkCAPInvoke: state.create with a valid note is ok (the note lands in
// the state.db, duration_ms is there); with an invalid one INVALID_INPUT,
// inside the result.
func checkCAPInvoke(t *testing.T, n endpointNode, call capCall, id, title string) {
	t.Helper()
	ref := map[string]any{"capability_id": noteCreateCap, "version": "1.0.0"}
	var res invokeResult
	mustResult(t, "capability.invoke", call(t, "capability.invoke", map[string]any{"ref": ref, "input": noteInput(id, title)}), &res)
	if !res.OK || res.Error != nil || res.DurationMS == nil || *res.DurationMS < 0 || !strings.Contains(string(res.Output), title) {
		t.Fatalf("capability.invoke = %+v output %s; want ok with duration_ms and the created note", res, res.Output)
	}
	waitNote(t, n, id, title)

	res = invokeResult{}
	bad := map[string]any{"schema_uri": noteSchema, "object": map[string]any{"id": id, "title": 42}}
	mustResult(t, "capability.invoke", call(t, "capability.invoke", map[string]any{"ref": ref, "input": bad}), &res)
	if res.OK || res.Error == nil || res.Error.Code != capabilities.CodeInvalidInput || res.DurationMS == nil {
		t.Fatalf("capability.invoke with an invalid note = %+v; want INVALID_INPUT", res)
	}
	if notesOn(t, n.a2aNode)[id] != title {
		t.Fatal("the refused invoke changed the note")
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func mustReadFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
