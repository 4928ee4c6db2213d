package nostrrpc_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentnode/agentnode/internal/testkit"
)

// BenchmarkClient_CallAgent is one agent-to-agent call across two nodes on
// loopback: sign + encrypt, subscribe (AUTHed), publish, serve, reply,
// verify + decrypt.
func BenchmarkClient_CallAgent(b *testing.B) {
	alice, bob := testkit.NewKey(b), testkit.NewKey(b)
	na, nb := startNode(b, alice), startNode(b, bob)
	nb.serve(b, &handler{}, 4)
	cl := na.client(b, nb.url)
	ctx := context.Background()
	params := json.RawMessage(`{"text":"hi"}`)
	if _, err := cl.CallAgent(ctx, alice.PK, bob.PK, "echo", params); err != nil { // connect + AUTH once
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := cl.CallAgent(ctx, alice.PK, bob.PK, "echo", params); err != nil {
			b.Fatal(err)
		}
	}
}
