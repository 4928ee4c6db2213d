package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentnode/agentnode/agentd"
)

// Helpers of the served-node end-to-end tests of the protocol endpoints
// (/acp, /cap/agents/{agent}, /mcp, /mcp/agents/{agent}): a real
// `agentnode serve` on a loopback port with one installed agent, and
// clients that speak to it exactly as an outside caller would (HTTP POST,
// a WebSocket, the go-sdk MCP client, the CLI).

// e2eWait bounds every wait of these tests (a poll, a call, a read).
const e2eWait = 30 * time.Second

// endpointNode is a served node with one installed agent and the node's
// API token (<data>/agents/api.token).
type endpointNode struct {
	a2aNode
	token string
	// close stops the node (once; the test's cleanup calls it too).
	close func()
}

// startEndpointNode starts a served node (as startServe, but stoppable
// before the test ends), waits until it serves and installs an agent
// titled title.
func startEndpointNode(t *testing.T, title string, args ...string) endpointNode {
	t.Helper()
	m := &Main{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	c := &ServeCommand{m: m}
	base := []string{"--listen", "127.0.0.1:0", "--data", t.TempDir(), "--log-level", "error"}
	if err := c.ParseFlags(append(base, args...)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := c.Open(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- c.Serve(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			<-served
			cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer ccancel()
			if err := c.Close(cctx); errors.Is(err, net.ErrClosed) {
				// A known defect, reported: the kind-25910 client's connection
				// to a --peer that already shut down fails to close
				// (agentd/state/replicate/wsconn.go close returns the
				// websocket's "use of closed network connection").
				t.Logf("close %s: %v", c.Addr(), err)
			} else if err != nil {
				t.Errorf("close %s: %v", c.Addr(), err)
			}
		})
	}
	t.Cleanup(stop)
	sn := &servedNode{ServeCommand: c, stop: stop}
	n := installServedAgent(t, waitServing(t, sn), title)
	token, err := agentd.ReadToken(c.Config.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	return endpointNode{a2aNode: n, token: token, close: stop}
}

// url is the node's HTTP URL of path.
func (n endpointNode) url(path string) string { return "http://" + n.Addr() + path }

// wsURL is the node's WebSocket URL of path.
func (n endpointNode) wsURL(path string) string { return "ws://" + n.Addr() + path }

// env is the CLI's environment against this node (its relay, its HTTP API
// and its data directory, for the API token).
func (n endpointNode) env() map[string]string {
	return map[string]string{"AGENTNODE_RELAY": n.wsURL(""), "AGENTNODE_NODE": n.url(""), "AGENTNODE_DATA": n.Config.DataDir}
}

// agentPK is the installed agent's hex pubkey.
func (n endpointNode) agentPK() string { return n.agent.Agent.PubKey }

// rpcErrorBody is a JSON-RPC error as these tests read it.
type rpcErrorBody struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// rpcReply is one JSON-RPC response.
type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *rpcErrorBody   `json:"error"`
}

// messageResult is an agent/message result (or the answer part of
// agent/delegate's) as these tests read it.
type messageResult struct {
	Source  string `json:"source"`
	Content struct {
		Payload struct {
			Messages []struct {
				Text string `json:"text"`
			} `json:"messages"`
		} `json:"payload"`
	} `json:"content"`
	Meta struct {
		CorrelationID string `json:"correlationId"`
	} `json:"_meta"`
}

// texts are the texts of the result's messages.
func (r messageResult) texts() []string {
	var out []string
	for _, m := range r.Content.Payload.Messages {
		out = append(out, m.Text)
	}
	return out
}

// messageContent is agent/message's content carrying one request text.
func messageContent(text string) map[string]any {
	return map[string]any{"type": "request", "payload": map[string]any{"messages": []map[string]any{{"text": text}}}}
}

// rpcRequest is the body of one request with id (0: a notification).
func rpcRequest(id int, method string, params any) string {
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if id != 0 {
		msg["id"] = id
	}
	if params != nil {
		msg["params"] = params
	}
	b, err := json.Marshal(msg)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// postJSON POSTs body to url with the bearer token (none when "") and
// returns the status and the body.
func postJSON(t *testing.T, url, token, body string) (int, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2eWait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// decodeReply decodes one response (fails the test on anything else).
func decodeReply(t *testing.T, raw []byte) rpcReply {
	t.Helper()
	var r rpcReply
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("not a JSON-RPC response: %s: %v", raw, err)
	}
	return r
}

// rpcPost POSTs one request with the token and returns its response.
func rpcPost(t *testing.T, url, token, method string, params any) rpcReply {
	t.Helper()
	status, raw := postJSON(t, url, token, rpcRequest(1, method, params))
	if status != http.StatusOK {
		t.Fatalf("%s on %s: status %d: %s", method, url, status, raw)
	}
	return decodeReply(t, raw)
}

// mustResult decodes a response's result into v, failing on an error.
func mustResult(t *testing.T, what string, r rpcReply, v any) {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("%s: error %d %s %s", what, r.Error.Code, r.Error.Message, r.Error.Data)
	}
	if err := json.Unmarshal(r.Result, v); err != nil {
		t.Fatalf("%s: result %s: %v", what, r.Result, err)
	}
}

// dialWS opens a WebSocket to url with the bearer token (none when "").
func dialWS(t *testing.T, url, token string) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	h := http.Header{}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	d := websocket.Dialer{HandshakeTimeout: e2eWait}
	conn, resp, err := d.Dial(url, h)
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err == nil {
		t.Cleanup(func() { conn.Close() })
	}
	return conn, resp, err
}

// wsSend writes one text frame.
func wsSend(t *testing.T, conn *websocket.Conn, msg string) {
	t.Helper()
	if err := conn.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
		t.Fatal(err)
	}
}

// wsRead reads the next text frame (bounded by e2eWait).
func wsRead(t *testing.T, conn *websocket.Conn) []byte {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(e2eWait))
	_, b, err := conn.ReadMessage()
	if err != nil {
		t.Fatalf("read a frame: %v", err)
	}
	return b
}

// wsCall sends one request over conn and returns the frame answering it.
func wsCall(t *testing.T, conn *websocket.Conn, method string, params any) rpcReply {
	t.Helper()
	wsSend(t, conn, rpcRequest(1, method, params))
	return decodeReply(t, wsRead(t, conn))
}

// bearerRT adds the API token to every request of the go-sdk client.
type bearerRT struct{ token string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// mcpConnect initializes the official go-sdk MCP client against endpoint
// over streamable HTTP, with the bearer token (none when "").
func mcpConnect(t *testing.T, endpoint, token string) (*mcp.ClientSession, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2eWait)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearerRT{token}}}
	cs, err := client.Connect(ctx, tr, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// mcpCall calls a tool and returns the result and its structured content
// as a map.
func mcpCall(t *testing.T, cs *mcp.ClientSession, name string, args any) (*mcp.CallToolResult, map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2eWait)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	var out map[string]any
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("structuredContent of %s: %s: %v", name, b, err)
		}
	}
	return res, out
}

// mcpToolNames lists the session's tools by name, in the server's order.
func mcpToolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2eWait)
	defer cancel()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// textOf is the text of a tool result's first content item ("" if none).
func textOf(res *mcp.CallToolResult) string {
	if len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

// searchedAgents are the agent ids an agentSearch result lists.
func searchedAgents(t *testing.T, result json.RawMessage) []string {
	t.Helper()
	var res struct {
		Structured struct {
			Agents []struct {
				ID string `json:"id"`
			} `json:"agents"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(result, &res); err != nil {
		t.Fatalf("agentSearch result %s: %v", result, err)
	}
	var ids []string
	for _, a := range res.Structured.Agents {
		ids = append(ids, a.ID)
	}
	return ids
}

// compactJSON is raw without insignificant whitespace (for comparisons in
// failure messages).
func compactJSON(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
