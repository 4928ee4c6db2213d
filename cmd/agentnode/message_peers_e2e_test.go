package main

import (
	"strings"
	"testing"

	"github.com/agentnode/agentnode/capabilities/llm/llmtest"
	"github.com/agentnode/agentnode/internal/testkit"
)

// agent/message between two served nodes where only B names A with
// --peer (A knows nothing of B's relay). A's agent messages B's agent:
// A's client publishes to A's relay only, and B's kind-25910 server
// listens there too (as a peer) and answers there. B's agent messages A's
// agent the other way: B's client publishes to its peer A, whose server
// answers. Both answers come from the scripted models of the nodes.
func TestMessage_E2E_OneWayPeeringBothDirections(t *testing.T) {
	srvA := llmtest.NewServer(t).Always(reply("A's agent here"))
	srvB := llmtest.NewServer(t).Always(reply("B's agent here"))
	a := startEndpointNode(t, "Alpha", "--config", configFile(t, map[string]any{"model": modelSection(srvA)}))
	b := startEndpointNode(t, "Beta", "--config", configFile(t, map[string]any{"model": modelSection(srvB)}), "--peer", "ws://"+a.Addr())
	if len(a.Config.Peers) != 0 {
		t.Fatalf("A has peers %v; the test needs one-way peering", a.Config.Peers)
	}
	waitSearchFinds(t, a.url(pathACP), a.token, b.agentPK(), map[string]any{})
	waitSearchFinds(t, b.url(pathACP), b.token, a.agentPK(), map[string]any{})
	testkit.WaitFor(t, e2eWait, "B's 25910 server listening on A's relay", func() bool { return b.rt.rpcPeers.Live() == 1 })

	message := func(from endpointNode, to string, text, corr string) string {
		t.Helper()
		var res messageResult
		mustResult(t, "agent/message", rpcPost(t, from.url(pathACP), from.token, "agent/message", map[string]any{
			"source": from.agentPK(), "target": to, "_meta": map[string]any{"correlationId": corr},
			"content": messageContent(text)}), &res)
		if res.Source != to || res.Meta.CorrelationID != corr || len(res.texts()) != 1 {
			t.Fatalf("agent/message to %s = %+v", to, res)
		}
		return res.texts()[0]
	}
	if got := message(a, b.agentPK(), "hello B, from the node without --peer", "corr-a-b"); got != "B's agent here" {
		t.Fatalf("A -> B answered %q", got)
	}
	if reqs := srvB.Requests(); len(reqs) == 0 || !strings.Contains(string(reqs[len(reqs)-1].Raw), "without --peer") {
		t.Fatalf("B's model got %d requests; want A's message", len(reqs))
	}
	if got := message(b, a.agentPK(), "hello A, from the node with --peer", "corr-b-a"); got != "A's agent here" {
		t.Fatalf("B -> A answered %q", got)
	}
}

// Two nodes that do not name each other but both name a third relay (a
// third served node, C) with --peer: each node's 25910 server listens on
// C, each client publishes there, so agent/message works both ways.
func TestMessage_E2E_SharedThirdRelay(t *testing.T) {
	srvA := llmtest.NewServer(t).Always(reply("A's agent here"))
	srvB := llmtest.NewServer(t).Always(reply("B's agent here"))
	c := startEndpointNode(t, "Hub")
	a := startEndpointNode(t, "Alpha", "--config", configFile(t, map[string]any{"model": modelSection(srvA)}), "--peer", "ws://"+c.Addr())
	b := startEndpointNode(t, "Beta", "--config", configFile(t, map[string]any{"model": modelSection(srvB)}), "--peer", "ws://"+c.Addr())
	waitSearchFinds(t, a.url(pathACP), a.token, b.agentPK(), map[string]any{})
	waitSearchFinds(t, b.url(pathACP), b.token, a.agentPK(), map[string]any{})
	for _, n := range []endpointNode{a, b} {
		testkit.WaitFor(t, e2eWait, "the 25910 server listening on C", func() bool { return n.rt.rpcPeers.Live() == 1 })
	}
	for _, tc := range []struct {
		from endpointNode
		to   string
		want string
	}{{a, b.agentPK(), "B's agent here"}, {b, a.agentPK(), "A's agent here"}} {
		var res messageResult
		mustResult(t, "agent/message", rpcPost(t, tc.from.url(pathACP), tc.from.token, "agent/message", map[string]any{
			"source": tc.from.agentPK(), "target": tc.to, "content": messageContent("hi")}), &res)
		if m := res.texts(); len(m) != 1 || m[0] != tc.want {
			t.Fatalf("agent/message to %s = %+v, want %q", tc.to, res, tc.want)
		}
	}
}
