package main

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/internal/testkit"
)

// The Agent Context Protocol endpoint of a real served node
// (docs/AGENT-CONTEXT-PROTOCOL.md): POST /acp and ws://…/acp, the token,
// negotiation, the three tools, agentSearch finding the node's own agent
// once its heartbeat is in, batches and notifications, and the go-sdk MCP
// client.

// acpInitialize is initialize as an Agent Context Protocol client asks it.
var acpInitialize = map[string]any{"protocolVersion": "ACP-1.0",
	"capabilities": map[string]any{"agent": map[string]any{"protocols": []string{"ACP-1.2", "ACP-1.0"}}},
	"clientInfo":   map[string]any{"name": "e2e", "version": "1"}}

// waitSearchFinds polls agentSearch on url with args until it lists agent.
func waitSearchFinds(t *testing.T, url, token, agent string, args map[string]any) []string {
	t.Helper()
	var ids []string
	testkit.WaitFor(t, e2eWait, "agentSearch to find "+agent, func() bool {
		r := rpcPost(t, url, token, "tools/call", map[string]any{"name": "agentSearch", "arguments": args})
		if r.Error != nil {
			t.Fatalf("agentSearch: %d %s %s", r.Error.Code, r.Error.Message, r.Error.Data)
		}
		ids = searchedAgents(t, r.Result)
		return slices.Contains(ids, agent)
	})
	return ids
}

func TestACPEndpoint_E2E_HTTP(t *testing.T) {
	n := startEndpointNode(t, "Analyst")
	url := n.url(pathACP)

	if status, body := postJSON(t, url, "", rpcRequest(1, "initialize", acpInitialize)); status != http.StatusUnauthorized {
		t.Fatalf("initialize without the token: %d %s, want 401", status, body)
	}
	if status, body := postJSON(t, url, "wrong", rpcRequest(1, "initialize", acpInitialize)); status != http.StatusUnauthorized {
		t.Fatalf("initialize with a wrong token: %d %s, want 401", status, body)
	}

	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
		ServerInfo      struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"serverInfo"`
		Capabilities struct {
			Agent struct {
				Discovery bool     `json:"discovery"`
				Protocols []string `json:"protocols"`
			} `json:"agent"`
		} `json:"capabilities"`
	}
	mustResult(t, "initialize", rpcPost(t, url, n.token, "initialize", acpInitialize), &init)
	if init.ProtocolVersion != "ACP-1.0" || init.ServerInfo.Name != "agentnode" || init.ServerInfo.Version != Version ||
		!init.Capabilities.Agent.Discovery || !slices.Contains(init.Capabilities.Agent.Protocols, "ACP-1.0") {
		t.Fatalf("initialize = %+v; want ACP-1.0 and serverInfo agentnode %s", init, Version)
	}

	var tools struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	mustResult(t, "tools/list", rpcPost(t, url, n.token, "tools/list", nil), &tools)
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if strings.Join(names, ",") != "agentSearch,taskAssign,agentEvaluate" {
		t.Fatalf("tools/list = %v", names)
	}

	waitSearchFinds(t, url, n.token, n.agentPK(), map[string]any{})

	// A batch: a request, a notification (no answer), a request; answered
	// in order. Then a body of notifications only: 204, no body.
	batch := "[" + rpcRequest(1, "initialize", acpInitialize) + "," + rpcRequest(0, "notifications/initialized", nil) +
		"," + rpcRequest(2, "ping", nil) + "," + rpcRequest(3, "agent/teleport", nil) + "]"
	status, raw := postJSON(t, url, n.token, batch)
	var got []rpcReply
	if status != http.StatusOK || json.Unmarshal(raw, &got) != nil {
		t.Fatalf("batch: %d %s", status, raw)
	}
	if len(got) != 3 || string(got[0].ID) != "1" || !strings.Contains(string(got[0].Result), `"ACP-1.0"`) ||
		string(got[1].ID) != "2" || compactJSON(got[1].Result) != "{}" ||
		string(got[2].ID) != "3" || got[2].Error == nil || got[2].Error.Code != -32601 {
		t.Fatalf("batch answers = %s; want initialize, ping {}, -32601, and nothing for the notification", raw)
	}
	status, raw = postJSON(t, url, n.token, rpcRequest(0, "notifications/initialized", nil))
	if status != http.StatusNoContent || len(raw) != 0 {
		t.Fatalf("a notification: %d %q, want 204 and no body", status, raw)
	}
}

// TestACPEndpoint_E2E_WebSocket: ws://addr/acp speaks JSON-RPC, not Nostr:
// the endpoint sits in front of the relay in the mux, which would take the
// upgrade as a Nostr connection otherwise.
func TestACPEndpoint_E2E_WebSocket(t *testing.T) {
	n := startEndpointNode(t, "Analyst")
	waitSearchFinds(t, n.url(pathACP), n.token, n.agentPK(), map[string]any{})

	if _, resp, err := dialWS(t, n.wsURL(pathACP), ""); err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("ws /acp without the token: err %v, status %d; want refused with 401", err, status)
	}
	conn, _, err := dialWS(t, n.wsURL(pathACP), n.token)
	if err != nil {
		t.Fatalf("ws /acp: %v", err)
	}

	r := wsCall(t, conn, "initialize", acpInitialize)
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
		ServerInfo      struct {
			Name string `json:"name"`
		} `json:"serverInfo"`
	}
	mustResult(t, "initialize over ws", r, &init)
	if init.ProtocolVersion != "ACP-1.0" || init.ServerInfo.Name != "agentnode" {
		t.Fatalf("initialize over ws = %+v", init)
	}

	r = wsCall(t, conn, "tools/call", map[string]any{"name": "agentSearch", "arguments": map[string]any{}})
	if r.Error != nil || !slices.Contains(searchedAgents(t, r.Result), n.agentPK()) {
		t.Fatalf("agentSearch over ws = %s %+v; want the node's agent", r.Result, r.Error)
	}

	batch := "[" + rpcRequest(1, "ping", nil) + "," + rpcRequest(2, "tools/list", nil) + "]"
	wsSend(t, conn, batch)
	var got []rpcReply
	if raw := wsRead(t, conn); json.Unmarshal(raw, &got) != nil || len(got) != 2 || string(got[0].ID) != "1" ||
		string(got[1].ID) != "2" || !strings.Contains(string(got[1].Result), "agentEvaluate") {
		t.Fatalf("batch over ws = %s", raw)
	}

	// A notification gets no frame: the next frame answers the request after it.
	wsSend(t, conn, rpcRequest(0, "notifications/initialized", nil))
	wsSend(t, conn, rpcRequest(7, "ping", nil))
	if r := decodeReply(t, wsRead(t, conn)); string(r.ID) != "7" || r.Error != nil {
		t.Fatalf("after a notification: %+v; want the answer to id 7", r)
	}

	// Every other path is still the relay: a Nostr REQ on ws://addr/ ends
	// with EOSE.
	relayConn, _, err := dialWS(t, n.wsURL("/"), "")
	if err != nil {
		t.Fatalf("ws / (the relay): %v", err)
	}
	wsSend(t, relayConn, `["REQ","e2e",{"kinds":[4199],"limit":1}]`)
	for {
		var msg []json.RawMessage
		if raw := wsRead(t, relayConn); json.Unmarshal(raw, &msg) != nil || len(msg) == 0 {
			t.Fatalf("the relay answered %s", raw)
		}
		if string(msg[0]) == `"EOSE"` {
			break
		}
		if string(msg[0]) != `"EVENT"` {
			t.Fatalf("the relay answered %s to a REQ", msg[0])
		}
	}
}

// TestACPEndpoint_E2E_MCPClient: the official go-sdk client, unchanged but
// for the bearer header, against the served node's /acp.
func TestACPEndpoint_E2E_MCPClient(t *testing.T) {
	n := startEndpointNode(t, "Analyst")
	waitSearchFinds(t, n.url(pathACP), n.token, n.agentPK(), map[string]any{})

	if _, err := mcpConnect(t, n.url(pathACP), ""); err == nil {
		t.Fatal("the MCP client without the token initialized; want refused")
	}
	cs, err := mcpConnect(t, n.url(pathACP), n.token)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if got := cs.InitializeResult(); got.ProtocolVersion != "2025-06-18" || got.ServerInfo.Name != "agentnode" {
		t.Fatalf("initialize = %q %+v; want 2025-06-18 from agentnode", got.ProtocolVersion, got.ServerInfo)
	}
	if got := mcpToolNames(t, cs); strings.Join(got, ",") != "agentSearch,taskAssign,agentEvaluate" {
		t.Fatalf("tools = %v", got)
	}
	res, out := mcpCall(t, cs, "agentSearch", map[string]any{})
	agents, _ := out["agents"].([]any)
	var ids []string
	for _, a := range agents {
		if m, ok := a.(map[string]any); ok {
			id, _ := m["id"].(string)
			ids = append(ids, id)
		}
	}
	if res.IsError || !slices.Contains(ids, n.agentPK()) || !strings.HasPrefix(textOf(res), "Found ") {
		t.Fatalf("agentSearch = %q %v; want the node's agent %s", textOf(res), out, n.agentPK())
	}
}
