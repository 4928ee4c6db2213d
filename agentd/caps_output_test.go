package agentd_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/bindings"
	"github.com/agentnode/agentnode/capabilities/cap"
)

// pagesServer is an MCP service whose "fetch" tool declares an
// outputSchema ({text: string}) and breaks it for a URL containing "bad".
func pagesServer(t *testing.T) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "pages", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "fetch", InputSchema: map[string]any{"type": "object"},
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

// notePackageWithOutputs binds fetch_web_content to the MCP service and
// gives state.query an output_schema no query result meets (an array).
func notePackageWithOutputs(t *testing.T) []byte {
	raw := string(notePackage(t, "1.0.0", "http://example.org/"))
	raw = strings.Replace(raw, `    type: "http_get"
    url: "http://example.org/"`, `    type: "mcp_service"
    service_uri: "mcp://pages"
    mcp_action: "fetch"`, 1)
	raw = strings.Replace(raw, "      name: state.query\n", "      name: state.query\n      output_schema: {type: array}\n", 1)
	return []byte(raw)
}

// Output schemas come from the package and from the backing MCP tool, are
// advertised by describe, and are checked on every result; a tool a nudge
// removes is not listed.
func TestDaemon_CapSource_OutputSchemas(t *testing.T) {
	runner := bindings.New(bindings.Config{AllowPrivate: true, MCP: map[string]bindings.MCPEndpoint{"mcp://pages": {URL: pagesServer(t)}}})
	t.Cleanup(func() { runner.Close() })
	cn := openCapsNode(t, agentd.Config{Bindings: runner})
	cn.installFile(sign(t, notePackageWithOutputs(t), cn.author.SK))
	host := cap.NewHost(cn.d.CapSource(), cap.Options{})
	ctx := context.Background()
	agent := cn.agent.Agent.PubKey
	fetch := cap.Ref{CapabilityID: "did:nuwa:cap:note/fetch_web_content", Version: "1.0.0"}
	query := cap.Ref{CapabilityID: "did:nuwa:cap:note/state.query", Version: "1.0.0"}

	m, err := host.Describe(ctx, agent, fetch)
	if err != nil || !strings.Contains(string(m.OutputSchema), `"required":["text"]`) {
		t.Fatalf("describe fetch: output_schema %s, %v", m.OutputSchema, err)
	}
	if m, _ := host.Describe(ctx, agent, query); string(m.OutputSchema) != `{"type":"array"}` {
		t.Errorf("describe state.query: output_schema %s", m.OutputSchema)
	}
	if res := host.Invoke(ctx, agent, fetch, json.RawMessage(`{"url":"https://example.org/a"}`)); !res.OK || !strings.Contains(string(res.Output), "page https://example.org/a") {
		t.Fatalf("fetch: %+v", res)
	}
	res := host.Invoke(ctx, agent, fetch, json.RawMessage(`{"url":"https://example.org/bad"}`))
	if res.OK || res.Error.Code != capabilities.CodeExecutionFailed || !strings.Contains(res.Error.Message, "output does not match output_schema") {
		t.Errorf("fetch breaking the MCP tool's outputSchema: %+v", res)
	}
	res = host.Invoke(ctx, agent, query, json.RawMessage(`{"from":"`+noteURI+`"}`))
	if res.OK || res.Error.Code != capabilities.CodeExecutionFailed {
		t.Errorf("state.query breaking the package's output_schema: %+v", res)
	}

	cn.denyNudge("fetch_web_content")
	list, _ := host.List(ctx, agent)
	for _, m := range list {
		if m.CapabilityID == fetch.CapabilityID {
			t.Errorf("a tool a nudge removes is listed: %+v", m)
		}
	}
	if _, err := host.Describe(ctx, agent, fetch); capabilities.CodeOf(err) != capabilities.CodeNotFound {
		t.Errorf("describe a removed tool: %v", err)
	}
	if res := host.Invoke(ctx, agent, fetch, json.RawMessage(`{"url":"https://example.org/a"}`)); res.OK || res.Error.Code != capabilities.CodePermissionDenied {
		t.Errorf("invoke a removed tool: %+v", res)
	}
}

// Invoking one tool asks no other tool's binding for its output schema:
// an MCP service that is down (here: one that counts its requests and
// answers none of them as MCP) costs the package's built-in tools
// nothing. The schema is resolved once, for the capability run (issue 25).
func TestDaemon_CapSource_InvokeAsksOnlyItsOwnSchema(t *testing.T) {
	var hits atomic.Int64
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	t.Cleanup(down.Close)
	runner := bindings.New(bindings.Config{AllowPrivate: true, MCP: map[string]bindings.MCPEndpoint{"mcp://pages": {URL: down.URL}}})
	t.Cleanup(func() { runner.Close() })
	cn := openCapsNode(t, agentd.Config{Bindings: runner})
	cn.installFile(sign(t, notePackageWithOutputs(t), cn.author.SK))
	host := cap.NewHost(cn.d.CapSource(), cap.Options{})
	create := cap.Ref{CapabilityID: "did:nuwa:cap:note/state.create", Version: "1.0.0"}
	note := `{"schema_uri":"did:nuwa:state:note#v1","object":{"id":"6f1c8a52-8f0e-4d5c-9a57-3c1f0f6b2a10","title":"t","body":"b",` +
		`"createdAt":"2026-11-27T00:00:00Z","updatedAt":"2026-11-27T00:00:00Z"}}`
	if res := host.Invoke(context.Background(), cn.agent.Agent.PubKey, create, json.RawMessage(note)); !res.OK {
		t.Fatalf("state.create: %+v", res.Error)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("invoking state.create reached fetch_web_content's MCP service %d times", n)
	}
}
