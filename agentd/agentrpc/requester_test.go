package agentrpc_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
)

// A local agent answers an agent/message or a delegated task on behalf of
// its source: the Messenger's context carries it (agentd/requester), so
// the agent's state is reached with the source's rights. The remote
// caller (kind 25910's verified signer) is the source; a message without
// one carries none (the operator, with the API token).
func TestService_RequesterIsTheSource(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	msg := json.RawMessage(`{"content":{"type":"request","payload":{"messages":[{"text":"hi"}]}}}`)
	if _, err := f.svc.ServeRPC(ctx, alice.pk, erin.pk, "agent/message", msg); err != nil {
		t.Fatal(err)
	}
	task := json.RawMessage(`{"task":{"type":"analysis","payload":{"messages":[{"text":"look"}]}}}`)
	if _, err := f.svc.ServeRPC(ctx, bob.pk, erin.pk, "agent/delegate", task); err != nil {
		t.Fatal(err)
	}
	f.echo.mu.Lock()
	got := slices.Clone(f.echo.asked)
	f.echo.mu.Unlock()
	if want := []string{erin.pk, erin.pk}; !slices.Equal(got, want) {
		t.Fatalf("requesters seen by the Messenger = %q, want erin twice", got)
	}
}
