package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/cap"
	"github.com/agentnode/agentnode/capabilities/mcpserver"
	"github.com/agentnode/agentnode/capabilities/registry"
	"github.com/agentnode/agentnode/capabilities/registry/registrytest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nbd-wtf/go-nostr"
)

const (
	t0    = 1_700_000_000
	token = "s3cret"
)

// agentSource gives one agent the capabilities of the note package (from
// the registry) plus a real word_count tool.
type agentSource struct {
	agent string
	caps  []cap.Capability
}

func (s *agentSource) Capabilities(_ context.Context, agent string) ([]cap.Capability, error) {
	if agent != s.agent {
		return nil, capabilities.Errorf(capabilities.CodeNotFound, "no agent")
	}
	return s.caps, nil
}

func (s *agentSource) Run(_ context.Context, _ string, c cap.Capability, input json.RawMessage) (json.RawMessage, error) {
	switch c.Manifest.CapabilityID {
	case "cap:word_count":
		var in struct{ Text string }
		if err := json.Unmarshal(input, &in); err != nil {
			return nil, err
		}
		return json.Marshal(map[string]int{"words": len(strings.Fields(in.Text))})
	case "did:nuwa:cap:note/state.create":
		return json.RawMessage(`{"stored":true}`), nil
	}
	return nil, capabilities.Errorf(capabilities.CodePermissionDenied, "not runnable here")
}

type fixture struct {
	url, agent string
	note       *nostr.Event
}

func setup(t *testing.T) fixture {
	t.Helper()
	return setupWith(t, func(*mcpserver.Options) {})
}

// setupWith is setup with options changed by tune.
func setupWith(t *testing.T, tune func(*mcpserver.Options)) fixture {
	t.Helper()
	rel := registrytest.OpenRelay(t)
	author, _ := registrytest.Key(t)
	note := registrytest.Publish(t, rel, author, registrytest.Spec{Name: "note", Version: "1.0.0", Title: "Note",
		Description: "Create and manage personal notes", Tools: []string{"state.create"}}, t0)
	registrytest.Publish(t, rel, author, registrytest.Spec{Name: "weather", Version: "1.2.0",
		Description: "Weather forecasts", Tools: []string{"get_current_weather"}}, t0+1)
	reg := registry.New(rel)
	ctx := context.Background()
	if err := reg.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if reg.Len() != 2 {
		t.Fatalf("the registry loaded %d of the 2 published packages", reg.Len())
	}
	e, err := reg.Resolve(ctx, "note", "")
	if err != nil {
		t.Fatal(err)
	}
	_, agent := registrytest.Key(t)
	src := &agentSource{agent: agent}
	for _, m := range cap.ManifestsFor(e.Package) {
		src.caps = append(src.caps, cap.Capability{Manifest: m})
	}
	src.caps = append(src.caps, cap.Capability{Manifest: cap.Manifest{CapabilityID: "cap:word_count", Version: "1.0.0",
		Kind: cap.KindTool, Name: "word count", Description: "Counts words",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)}})
	opts := mcpserver.Options{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Authorize: func(_ context.Context, a, tok string) error {
			if a == agent && tok == token {
				return nil
			}
			return mcpserver.ErrUnauthorized
		},
	}
	tune(&opts)
	h := mcpserver.New(reg, cap.NewHost(src, cap.Options{}), opts)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return fixture{url: srv.URL, agent: agent, note: note}
}

type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func connect(t *testing.T, endpoint, tok string) (*mcp.ClientSession, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearerTransport{tok}}, MaxRetries: -1}
	cs, err := client.Connect(ctx, tr, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) (*mcp.CallToolResult, map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	var out map[string]any
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &out)
	}
	return res, out
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

func TestNew_registryTools(t *testing.T) {
	f := setup(t)
	cs, err := connect(t, f.url+"/mcp", "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := toolNames(t, cs), []string{"resolve_capability", "search_capabilities"}; !slices.Equal(got, want) {
		t.Fatalf("tools %v, want %v", got, want)
	}

	res, out := call(t, cs, "resolve_capability", map[string]any{"cap_uri": "did:nuwa:cap:note"})
	if res.IsError {
		t.Fatalf("resolve: %v", res.Content)
	}
	meta, _ := out["acp_metadata"].(map[string]any)
	if out["event_id"] != f.note.ID || out["author"] != f.note.PubKey || out["sha256"] != f.note.Tags.Find("x")[1] ||
		!strings.HasPrefix(out["naddr"].(string), "naddr1") || meta["id"] != "did:nuwa:cap:note@1.0.0" {
		t.Errorf("resolve result: %v", out)
	}

	res, _ = call(t, cs, "resolve_capability", map[string]any{"cap_uri": "did:nuwa:cap:missing"})
	if !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "not found") {
		t.Errorf("resolve missing: isError=%v %v", res.IsError, res.Content)
	}

	res, out = call(t, cs, "search_capabilities", map[string]any{"query_string": "weather forecasts"})
	results, _ := out["results"].([]any)
	if res.IsError || len(results) != 1 || results[0].(map[string]any)["cap_uri"] != "did:nuwa:cap:weather@1.2.0" {
		t.Errorf("search: %v", out)
	}
	_, out = call(t, cs, "search_capabilities", map[string]any{"query_string": "", "filters": map[string]any{"tool": "state.create"}})
	if results, _ := out["results"].([]any); len(results) != 1 {
		t.Errorf("search by tool: %v", out)
	}
}

func TestNew_agentTools(t *testing.T) {
	f := setup(t)
	cs, err := connect(t, f.url+"/mcp/agents/"+f.agent, token)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"cap_word_count", "note", "note__state.create"}
	if got := toolNames(t, cs); !slices.Equal(got, want) {
		t.Fatalf("tools %v, want %v", got, want)
	}
	listed, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range listed.Tools { // _meta maps each alias back to its CapabilityRef
		if tool.Name == "note__state.create" && (tool.Meta["capability_id"] != "did:nuwa:cap:note/state.create" ||
			tool.Meta["version"] != "1.0.0" || tool.Meta["kind"] != "tool") {
			t.Errorf("note__state.create _meta: %v", tool.Meta)
		}
	}

	res, out := call(t, cs, "cap_word_count", map[string]any{"text": "one two three"})
	if res.IsError || out["ok"] != true || res.Content[0].(*mcp.TextContent).Text != `{"words":3}` {
		t.Errorf("word_count: isError=%v %v", res.IsError, out)
	}
	res, out = call(t, cs, "cap_word_count", map[string]any{"text": 7})
	errObj, _ := out["error"].(map[string]any)
	if !res.IsError || errObj["code"] != capabilities.CodeInvalidInput {
		t.Errorf("word_count with a number: isError=%v %v", res.IsError, out)
	}
	res, out = call(t, cs, "note__state.create", map[string]any{"schema_uri": "did:nuwa:state:note#v1", "object": map[string]any{"text": "hi"}})
	if res.IsError || out["ok"] != true {
		t.Errorf("note__state.create: isError=%v %v", res.IsError, out)
	}
	res, out = call(t, cs, "note__state.create", map[string]any{"schema_uri": "x", "object": map[string]any{}})
	if errObj, _ := out["error"].(map[string]any); !res.IsError || errObj["code"] != capabilities.CodeInvalidInput {
		t.Errorf("note__state.create without text: %v", out)
	}
}

func TestNew_agentAuth(t *testing.T) {
	f := setup(t)
	for _, tc := range []struct{ path, tok string }{
		{"/mcp/agents/" + f.agent, ""},
		{"/mcp/agents/" + f.agent, "wrong"},
		{"/mcp/agents/" + strings.Repeat("b", 64), token},
	} {
		if _, err := connect(t, f.url+tc.path, tc.tok); err == nil {
			t.Errorf("%s with token %q: connected, want refused", tc.path, tc.tok)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, f.url+"/mcp/agents/"+f.agent, strings.NewReader(`{}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("no token: %d %q, want 401 with a Bearer challenge", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
}

func TestToolNames(t *testing.T) {
	ms := []cap.Manifest{
		{CapabilityID: "did:nuwa:cap:note", Version: "1.0.0"},
		{CapabilityID: "did:nuwa:cap:note", Version: "2.0.0"},
		{CapabilityID: "did:nuwa:cap:note/state.create", Version: "2.0.0"},
		{CapabilityID: "cap:a b", Version: "1.0.0"},
		{CapabilityID: "cap:a_b", Version: "1.0.0"},
		{CapabilityID: strings.Repeat("x", 200), Version: "1.0.0"},
	}
	got := mcpserver.ToolNames(ms)
	byID := map[string]string{}
	for alias, m := range got {
		if len(alias) > 128 || strings.ContainsFunc(alias, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.')
		}) {
			t.Errorf("alias %q is not MCP-legal", alias)
		}
		byID[m.CapabilityID+"@"+m.Version] = alias
	}
	if len(got) != len(ms) {
		t.Fatalf("%d aliases for %d manifests: %v", len(got), len(ms), got)
	}
	for id, want := range map[string]string{
		"did:nuwa:cap:note@2.0.0":              "note",
		"did:nuwa:cap:note@1.0.0":              "note__v1.0.0",
		"did:nuwa:cap:note/state.create@2.0.0": "note__state.create",
		"cap:a b@1.0.0":                        "cap_a_b",
		"cap:a_b@1.0.0":                        "cap_a_b_2",
	} {
		if byID[id] != want {
			t.Errorf("alias of %s = %q, want %q", id, byID[id], want)
		}
	}
}

// Two untrusted authors of one name, seen at once: resolve_capability
// answers a tool error naming the ambiguity (not "registry unavailable"),
// and naming the author resolves it.
func TestNew_resolveAmbiguous(t *testing.T) {
	rel := registrytest.OpenRelay(t)
	alice, alicePK := registrytest.Key(t)
	bob, _ := registrytest.Key(t)
	registrytest.Publish(t, rel, alice, registrytest.Spec{Name: "note", Version: "1.0.0"}, t0)
	registrytest.Publish(t, rel, bob, registrytest.Spec{Name: "note", Version: "8.0.0"}, t0-365*24*3600)
	srv := httptest.NewServer(mcpserver.New(registry.New(rel), nil, mcpserver.Options{}))
	t.Cleanup(srv.Close)
	cs, err := connect(t, srv.URL+"/mcp", "")
	if err != nil {
		t.Fatal(err)
	}
	res, _ := call(t, cs, "resolve_capability", map[string]any{"cap_uri": "note"})
	if !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "ambiguous") {
		t.Fatalf("resolve an ambiguous name: isError=%v %v", res.IsError, res.Content)
	}
	res, out := call(t, cs, "resolve_capability", map[string]any{"cap_uri": "note", "author": alicePK})
	if res.IsError || out["author"] != alicePK {
		t.Fatalf("resolve with the author: %v %v", res.Content, out)
	}
}
