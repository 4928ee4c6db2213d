package hostile

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/contextvm"
	"github.com/agentnode/agentnode/internal/netguard"
)

// cvmWait bounds each ContextVM exchange in these tests.
const cvmWait = 20 * time.Second

// cvmSession opens an MCP session over ContextVM (MCP over Nostr) from sk
// to agent on n's relay, in plaintext or gift-wrapped.
func cvmSession(t *testing.T, n *node, sk, agent string, enc contextvm.Encryption) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cvmWait)
	defer cancel()
	tr := &contextvm.ClientTransport{Network: netguard.Policy{AllowPrivate: true}, Relays: []string{n.url}, SecretKey: sk, Server: agent, Encryption: enc}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "hostile", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("ContextVM initialize to the agent: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// cvmCall calls a tool the agent does not have: the answer is a NOT_FOUND
// tool result, unless the call is refused before it runs (err).
func cvmCall(t *testing.T, cs *mcp.ClientSession) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cvmWait)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}})
	if err == nil && !res.IsError {
		t.Fatalf("tools/call of a missing tool: %+v", res)
	}
	return err
}

// A stranger reaches an agent over ContextVM without any account (issue
// 22), so its tools/calls draw on the strangers' budget like its DMs and
// legacy 25910 calls: past its burst it gets "rate-limited:" (-32029) and
// nothing runs, while the agent's owner is still served. On a node without
// a ContextVM server the stranger's initialize gets no answer at all.
func TestContextVM_strangersCallsBounded(t *testing.T) {
	n := &dmNode{node: startNodeWith(t, map[string]any{
		"relay":     map[string]any{"events_per_second": -1},
		"strangers": map[string]any{"per_sender": map[string]any{"burst": 2, "every_seconds": 3600}},
	}), ownerSK: nostr.GeneratePrivateKey()}
	n.agent = n.install(t)

	stranger := cvmSession(t, n.node, nostr.GeneratePrivateKey(), n.agent, contextvm.EncryptionDisabled)
	for i := range 2 {
		if err := cvmCall(t, stranger); err != nil {
			t.Fatalf("stranger's call %d within the budget: %v", i+1, err)
		}
	}
	err := cvmCall(t, stranger)
	if err == nil || !strings.Contains(err.Error(), "rate-limited:") {
		t.Fatalf("stranger's call past the budget: %v; want rate-limited", err)
	}
	owner := cvmSession(t, n.node, n.ownerSK, n.agent, contextvm.EncryptionRequired)
	for i := range 3 {
		if err := cvmCall(t, owner); err != nil {
			t.Fatalf("owner's call %d after the stranger's: %v", i+1, err)
		}
	}
}
