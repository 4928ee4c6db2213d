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

// Two sources naming the same sessionId talk in two conversations: a
// stranger who guesses a session does not get its history.
func TestService_SessionIsTheSources(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	msg := json.RawMessage(`{"content":{"type":"request","payload":{"messages":[{"text":"hi"}],"context":{"sessionId":"s1"}}}}`)
	for _, from := range []string{erin.pk, carol.pk} {
		if _, err := f.svc.ServeRPC(ctx, alice.pk, from, "agent/message", msg); err != nil {
			t.Fatal(err)
		}
	}
	f.echo.mu.Lock()
	convs := slices.Clone(f.echo.calls)
	f.echo.mu.Unlock()
	if len(convs) != 2 || convs[0] == convs[1] {
		t.Fatalf("conversations = %q, want two different ones", convs)
	}
}
