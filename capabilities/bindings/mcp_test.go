package bindings_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/capabilities/bindings"
)

// everythingServer is the reference MCP server's stdio command
// (@modelcontextprotocol/server-everything, pinned in interop/package.json).
func everythingServer(t *testing.T) []string {
	t.Helper()
	script, err := filepath.Abs("../../interop/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		t.Skipf("interop/node_modules is missing (run `cd interop && npm ci`): %v", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node_modules is installed but node is not on PATH: %v", err)
	}
	return []string{node, script, "stdio"}
}

func TestRunner_MCPStdioEverythingServer(t *testing.T) {
	r := newRunner(t, bindings.Config{MCP: map[string]bindings.MCPEndpoint{
		"mcp://everything": {Command: everythingServer(t)},
	}})
	echo := acp.Binding{Type: acp.BindMCPService, ServiceURI: "mcp://everything", MCPAction: "echo"}
	out, err := call(t, r, echo, `{"message":"hello from agentnode"}`)
	if err != nil {
		t.Fatal(err)
	}
	mustJSON(t, out, `{"content":[{"type":"text","text":"Echo: hello from agentnode"}]}`)

	sum := acp.Binding{Type: acp.BindMCPService, ServiceURI: "mcp://everything", MCPAction: "get-sum"}
	out, err = call(t, r, sum, `{"a":2,"b":40}`)
	if err != nil {
		t.Fatal(err)
	}
	mustJSON(t, out, `{"content":[{"type":"text","text":"The sum of 2 and 40 is 42."}]}`)

	if n := bindings.MCPSessions(r); n != 1 {
		t.Errorf("%d MCP sessions after two calls to one service, want 1 (reused)", n)
	}

	_, err = call(t, r, echo, `{"message":7}`) // the server's schema wants a string
	if ce := wantCode(t, err, capabilities.CodeExecutionFailed); ce.Message == "" {
		t.Error("empty message")
	}
	_, err = call(t, r, acp.Binding{Type: acp.BindMCPService, ServiceURI: "mcp://everything", MCPAction: "no-such-tool"}, `{}`)
	wantCode(t, err, capabilities.CodeExecutionFailed)
}

// inProcessServer is a go-sdk MCP server behind streamable HTTP with a
// structured tool, a text tool and a failing tool.
func inProcessServer(t *testing.T) *httptest.Server {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	type in struct {
		City string `json:"city"`
	}
	type out struct {
		City  string  `json:"city"`
		TempC float64 `json:"temp_c"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "weather"}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, out, error) {
		return nil, out{City: a.City, TempC: 21.5}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "shout"}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.ToUpper(a.City)}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "fail"}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no weather for " + a.City}}}, nil, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv
}

func TestRunner_MCPStreamableHTTP(t *testing.T) {
	srv := inProcessServer(t)
	r := newRunner(t, bindings.Config{MCP: map[string]bindings.MCPEndpoint{"mcp://weather": {URL: srv.URL}}})
	b := acp.Binding{Type: acp.BindMCPService, ServiceURI: "mcp://weather"}

	b.MCPAction = "weather"
	out, err := call(t, r, b, `{"city":"Oslo"}`)
	if err != nil {
		t.Fatal(err)
	}
	mustJSON(t, out, `{"city":"Oslo","temp_c":21.5}`) // structuredContent wins

	b.MCPAction = "shout"
	out, err = call(t, r, b, `{"city":"Oslo"}`)
	if err != nil {
		t.Fatal(err)
	}
	mustJSON(t, out, `{"content":[{"type":"text","text":"OSLO"}]}`)

	b.MCPAction = "fail"
	_, err = call(t, r, b, `{"city":"Oslo"}`)
	if ce := wantCode(t, err, capabilities.CodeExecutionFailed); !strings.Contains(ce.Message, "no weather for Oslo") {
		t.Errorf("message %q does not carry the tool's error text", ce.Message)
	}
}

// A service_uri that is an http(s) URL needs no entry in the operator's
// map: it is reached as it is, through the SSRF guard like an HTTP
// binding (loopback is refused unless the node allows private targets).
func TestRunner_MCPServiceURIIsAURL(t *testing.T) {
	srv := inProcessServer(t)
	b := acp.Binding{Type: acp.BindMCPService, ServiceURI: srv.URL, MCPAction: "weather"}

	guarded := newRunner(t, bindings.Config{})
	_, err := call(t, guarded, b, `{"city":"Oslo"}`)
	// The MCP SDK flattens the cause to text: read it from the wrapped error.
	if ce := wantCode(t, err, capabilities.CodeExecutionFailed); ce.Err == nil || !strings.Contains(ce.Err.Error(), "loopback address: refused") {
		t.Errorf("a loopback service_uri was not refused by the SSRF guard: %v (%v)", ce, ce.Err)
	}
	open := newRunner(t, bindings.Config{AllowPrivate: true})
	out, err := call(t, open, b, `{"city":"Oslo"}`)
	if err != nil {
		t.Fatal(err)
	}
	mustJSON(t, out, `{"city":"Oslo","temp_c":21.5}`)
}

func TestRunner_MCPUnknownService(t *testing.T) {
	r := newRunner(t, bindings.Config{})
	_, err := call(t, r, acp.Binding{Type: acp.BindMCPService, ServiceURI: "mcp://nowhere", MCPAction: "x"}, `{}`)
	if ce := wantCode(t, err, capabilities.CodeNotFound); !strings.Contains(ce.Message, "mcp://nowhere") {
		t.Errorf("message %q does not name the service_uri", ce.Message)
	}
}

func TestRunner_MCPSessionRestartsAfterDeath(t *testing.T) {
	srv := inProcessServer(t)
	r := newRunner(t, bindings.Config{MCP: map[string]bindings.MCPEndpoint{"mcp://weather": {URL: srv.URL}}})
	b := acp.Binding{Type: acp.BindMCPService, ServiceURI: "mcp://weather", MCPAction: "shout"}
	if _, err := call(t, r, b, `{"city":"a"}`); err != nil {
		t.Fatal(err)
	}
	bindings.KillMCPSession(r, "mcp://weather")
	out, err := call(t, r, b, `{"city":"b"}`)
	if err != nil {
		t.Fatalf("call after the session died: %v", err)
	}
	mustJSON(t, out, `{"content":[{"type":"text","text":"B"}]}`)
}

func TestRunner_MCPConcurrentCallsShareOneSession(t *testing.T) {
	srv := inProcessServer(t)
	r := newRunner(t, bindings.Config{MCP: map[string]bindings.MCPEndpoint{"mcp://weather": {URL: srv.URL}}})
	b := acp.Binding{Type: acp.BindMCPService, ServiceURI: "mcp://weather", MCPAction: "shout"}
	errs := make(chan error, 8)
	for range 8 {
		go func() { _, err := call(t, r, b, `{"city":"x"}`); errs <- err }()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := bindings.MCPSessions(r); n != 1 {
		t.Fatalf("%d sessions, want 1", n)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := call(t, r, b, `{"city":"x"}`)
	wantCode(t, err, capabilities.CodeExecutionFailed)
}

// A service_uri with credentials is shown redacted in the error a caller
// (and the model) sees: userinfo and query values are ***.
func TestRunner_MCPServiceURIRedactedInErrors(t *testing.T) {
	r := newRunner(t, bindings.Config{})
	for _, uri := range []string{"mcp://user:s3cret@nowhere/?token=t0ken", "http://user:s3cret@127.0.0.1:1/?token=t0ken"} {
		_, err := call(t, r, acp.Binding{Type: acp.BindMCPService, ServiceURI: uri, MCPAction: "x"}, `{}`)
		if err == nil {
			t.Fatalf("%s: no error", uri)
		}
		var ce *capabilities.Error
		if !errors.As(err, &ce) || strings.Contains(ce.Message, "s3cret") || strings.Contains(ce.Message, "t0ken") || !strings.Contains(ce.Message, "***@") {
			t.Errorf("%s: message %q, want the URL redacted", uri, ce.Message)
		}
	}
}
