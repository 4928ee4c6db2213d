package agentrpc_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentnode/agentnode/agentd/agentrpc"
)

// TestWebSocket: the same endpoint over a WebSocket: a batch is answered
// in one frame, a notification not at all (the next frame answers the
// request sent after it).
func TestWebSocket(t *testing.T) {
	f := newFixture(t)
	srv := httptest.NewServer(withToken(f.svc))
	defer srv.Close()
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(testWait))

	batch := `[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"ACP-1.0"}},
		{"jsonrpc":"2.0","id":2,"method":"agent/message","params":{"source":"` + alice.pk + `","target":"` + bob.pk + `",
		 "content":{"type":"request","payload":{"messages":[{"text":"over ws"}]}},"_meta":{"correlationId":"ws-1"}}}]`
	var got []struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
	}
	send(t, conn, batch)
	readJSON(t, conn, &got)
	if len(got) != 2 || !strings.Contains(string(got[0].Result), `"ACP-1.0"`) ||
		!strings.Contains(string(got[1].Result), `"bob heard: over ws"`) || !strings.Contains(string(got[1].Result), `"ws-1"`) {
		t.Fatalf("batch over ws = %+v", got)
	}

	send(t, conn, `{"jsonrpc":"2.0","method":"agent/heartbeat","params":{"agentId":"`+bob.pk+`","status":"active"}}`)
	send(t, conn, `{"jsonrpc":"2.0","id":3,"method":"agent/teleport"}`)
	var one struct {
		ID    int `json:"id"`
		Error struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	readJSON(t, conn, &one)
	if one.ID != 3 || one.Error.Code != -32601 {
		t.Fatalf("after a notification, got %+v; want the answer to id 3 (-32601)", one)
	}
}

func send(t *testing.T, conn *websocket.Conn, msg string) {
	t.Helper()
	if err := conn.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
		t.Fatal(err)
	}
}

func readJSON(t *testing.T, conn *websocket.Conn, v any) {
	t.Helper()
	_, b, err := conn.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
}

// TestMCPClient: the official go-sdk MCP client, over its streamable HTTP
// transport, initializes against the endpoint, lists the tools and calls
// agentSearch.
func TestMCPClient(t *testing.T) {
	f := newFixture(t)
	srv := httptest.NewServer(withToken(f.svc))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()

	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ProtocolVersion; got != "2025-06-18" {
		t.Errorf("negotiated %q, want 2025-06-18", got)
	}
	if got := cs.InitializeResult().ServerInfo.Name; got != "agentnode" {
		t.Errorf("serverInfo.name = %q", got)
	}

	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	if strings.Join(names, ",") != "agentSearch,taskAssign,agentEvaluate" {
		t.Fatalf("tools = %v", names)
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "agentSearch", Arguments: map[string]any{"capabilities": []string{"analysis"}}})
	if err != nil {
		t.Fatalf("tools/call agentSearch: %v", err)
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok || text.Text != "Found 2 matching agents" {
		t.Fatalf("agentSearch content = %#v", res.Content)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(b), bob.pk) || !strings.Contains(string(b), carol.pk) || strings.Contains(string(b), alice.pk) {
		t.Fatalf("agentSearch agents = %s; want bob and carol only", b)
	}
}

// bearerTransport adds the API token to every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestToken: with Config.Token set, a request without it is 401 and the
// MCP client passing it works; without a configured token every request
// is 401.
func TestToken(t *testing.T) {
	f := newFixture(t)
	svc := agentrpc.New(agentrpc.Config{Directory: f.dir, Tasks: f.tasks, Messenger: f.echo, Token: "s3cret", Logger: quiet})
	srv := httptest.NewServer(svc)
	defer srv.Close()
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without the token: %d, want 401", resp.StatusCode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearerTransport{"s3cret"}}}, nil)
	if err != nil {
		t.Fatalf("with the token: %v", err)
	}
	cs.Close()

	open := agentrpc.New(agentrpc.Config{Directory: f.dir, Tasks: f.tasks, Messenger: f.echo, Logger: quiet})
	openSrv := httptest.NewServer(open)
	defer openSrv.Close()
	req, _ := http.NewRequest(http.MethodPost, openSrv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer ")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("no token configured: %d %q, want 401 with a challenge (an empty token is never \"no check\")", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
}
