package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// scraperServer is an MCP service whose extract_text_content tool (the
// note package's fetch_web_content binding) declares an outputSchema
// ({text: string}) and breaks it for a URL containing "bad".
func scraperServer(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "scraper", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "extract_text_content", InputSchema: map[string]any{"type": "object"},
		OutputSchema: map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}, "required": []any{"text"}}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ URL string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			var out any = map[string]any{"text": "page " + in.URL}
			if strings.Contains(in.URL, "bad") {
				out = map[string]any{"txt": 1}
			}
			return &mcp.CallToolResult{StructuredContent: out, Content: []mcp.Content{&mcp.TextContent{Text: "{}"}}}, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

// The output schema of a tool bound to an MCP service reaches CAP describe
// and MCP tools/list under the real serve wiring (the bindings as serve
// decorates them for its metrics), and a result violating it is
// EXECUTION_FAILED (issue 22: the metrics wrapper hid the schema). The
// decoration is there too: every call through the binding is counted on
// /metrics. A decorator that hid the runner's OutputSchema fails the
// first half, one that dropped the calls the second (issue 25).
func TestServe_MCPBindingOutputSchema(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "serve.json")
	b, _ := json.Marshal(map[string]any{"bindings": map[string]any{"mcp": map[string]any{
		"did:nuwa:mcp:webscraper:version1": map[string]any{"url": scraperServer(t)}}}})
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	n := startEndpointNode(t, "Note Keeper", "--config", cfg)
	raw := strings.Replace(string(mustReadFile(t, notePackageFile(t, t.TempDir(), "1.0.0", ""))), `    type: "http_get"
    url: "http://example.org/fetch"`, `    type: "mcp_service"
    service_uri: "did:nuwa:mcp:webscraper:version1"
    mcp_action: "extract_text_content"`, 1)
	if !strings.Contains(raw, "mcp_service") {
		t.Fatal("the note package's fetch binding was not replaced")
	}
	n.installSigned(t, []byte(raw))
	const fetch = "did:nuwa:cap:note/fetch_web_content"

	var m struct {
		OutputSchema json.RawMessage `json:"output_schema"`
	}
	mustResult(t, "capability.describe", rpcPost(t, n.url("/cap/agents/"+n.agentPK()), n.token, "capability.describe",
		map[string]any{"capability_id": fetch, "version": "1.0.0"}), &m)
	if !strings.Contains(string(m.OutputSchema), `"required":["text"]`) {
		t.Fatalf("CAP describe: output_schema %s; want the MCP tool's", m.OutputSchema)
	}

	cs, err := mcpConnect(t, n.url("/mcp/agents/"+n.agentPK()), n.token)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var schema []byte
	for _, tool := range tools.Tools {
		if tool.Name == "note__fetch_web_content" {
			schema, _ = json.Marshal(tool.OutputSchema)
		}
	}
	if !strings.Contains(string(schema), `"required":["text"]`) {
		t.Fatalf("MCP tools/list: outputSchema %s; want the MCP tool's inside the InvokeResult's", schema)
	}
	res, out := mcpCall(t, cs, "note__fetch_web_content", map[string]any{"url": "https://example.org/bad"})
	if errObj, _ := out["error"].(map[string]any); !res.IsError || errObj["code"] != "EXECUTION_FAILED" {
		t.Fatalf("a result breaking the MCP tool's outputSchema: isError %v %v; want EXECUTION_FAILED", res.IsError, out)
	}
	var inv struct {
		OK bool `json:"ok"`
	}
	mustResult(t, "capability.invoke", rpcPost(t, n.url("/cap/agents/"+n.agentPK()), n.token, "capability.invoke",
		map[string]any{"ref": map[string]any{"capability_id": fetch, "version": "1.0.0"}, "input": map[string]any{"url": "https://example.org/good"}}), &inv)
	if !inv.OK {
		t.Fatal("capability.invoke of the MCP-bound tool with a good result failed")
	}
	const calls = "agentnode_agent_tool_calls_total{binding=mcp_service,result=ok}"
	if got := scrape(t, n.Addr())[calls]; got != 2 {
		t.Fatalf("%s = %v, want 2 (the MCP call and the CAP invoke, counted by the runner's OnCall hook)", calls, got)
	}
}
