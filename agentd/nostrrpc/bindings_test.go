package nostrrpc_test

import (
	"encoding/json"
	"testing"

	"github.com/nbd-wtf/go-nostr/nip19"

	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/capabilities/bindings"
	"github.com/agentnode/agentnode/internal/testkit"
)

// The spec's send_notification example, end to end: a nuwa_a2a binding
// with a "{contact_did}" target, through the real Client, two relays on
// loopback and the real Server.
func TestBindings_NuwaA2AThroughNostr(t *testing.T) {
	alice, bob := testkit.NewKey(t), testkit.NewKey(t)
	a, b := startNode(t, alice), startNode(t, bob)
	b.serve(t, &handler{}, 4)
	r := bindings.New(bindings.Config{A2A: a.client(t, a.url, b.url)})
	defer r.Close()
	npub, _ := nip19.EncodePublicKey(bob.PK)

	out, err := r.Call(callCtx(t), bindings.Call{
		Agent: alice.PK, Tool: "send_notification",
		Binding: acp.Binding{Type: acp.BindNuwaA2A, TargetDID: "{contact_did}", ServiceMethod: "echo"},
		Args:    json.RawMessage(`{"contact_did":"` + npub + `","message":"rain at 5"}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Agent, From string
		Params      map[string]any
	}
	json.Unmarshal(out, &got)
	if got.Agent != bob.PK || got.From != alice.PK || got.Params["message"] != "rain at 5" || len(got.Params) != 1 {
		t.Fatalf("bob's handler saw %s, want agent bob from alice with params {message}", out)
	}

	_, err = r.Call(callCtx(t), bindings.Call{
		Agent: alice.PK, Tool: "ring", Args: json.RawMessage(`{}`),
		Binding: acp.Binding{Type: acp.BindNuwaA2A, TargetDID: "did:nostr:" + bob.PK, ServiceMethod: "ring"},
	})
	wantCode(t, err, capabilities.CodeNotFound)
}
