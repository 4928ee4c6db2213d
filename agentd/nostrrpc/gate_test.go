package nostrrpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/nostrrpc"
	"github.com/agentnode/agentnode/agentd/strangers"
	"github.com/agentnode/agentnode/internal/testkit"
)

// Strangers past the budget get a -32029 "rate-limited:" error and cost
// no handler call; a known caller is served whatever the budget.
func TestServer_Gate_budgetsStrangers(t *testing.T) {
	bob, owner := testkit.NewKey(t), testkit.NewKey(t)
	b := startNode(t, bob)
	h := &handler{}
	budget := strangers.New(strangers.Config{PerAgent: strangers.Rate{Burst: 2, Every: time.Hour},
		Known: func(_ context.Context, _, from string) bool { return from == owner.PK }})
	s := nostrrpc.NewServer(nostrrpc.ServerConfig{Source: b.relay, Publish: b.relay.Publish, Keys: b.lookup,
		Handler: h, Logger: quietLogger(t), Gate: budget})
	testkit.Run(t, "nostrrpc server", s.Run, s.Ready())

	var limited int
	for i := range 5 {
		stranger := testkit.NewKey(t)
		req := rawRequest(t, stranger, bob.PK, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"echo"}`, i))
		resp := exchange(t, b, stranger, bob.PK, req)
		if resp.Error != nil {
			if resp.Error.Code != nostrrpc.CodeRateLimited || !strings.HasPrefix(resp.Error.Message, "rate-limited:") {
				t.Fatalf("refusal %+v, want -32029 rate-limited:", resp.Error)
			}
			limited++
		}
	}
	if h.count() != 2 || limited != 3 {
		t.Fatalf("%d handler calls and %d refusals for 5 strangers, want 2 and 3", h.count(), limited)
	}
	req := rawRequest(t, owner, bob.PK, `{"jsonrpc":"2.0","id":"o","method":"echo"}`)
	if resp := exchange(t, b, owner, bob.PK, req); resp.Error != nil {
		t.Fatalf("the owner's call: %+v", resp.Error)
	}
}

// Strangers take all the workers but one: with two workers, a stranger's
// call while another stranger's is running is refused at once, and the
// owner's is served.
func TestServer_Gate_strangersLeaveAWorker(t *testing.T) {
	bob, owner := testkit.NewKey(t), testkit.NewKey(t)
	b := startNode(t, bob)
	entered := make(chan struct{}, 1)
	h := nostrrpc.HandlerFunc(func(ctx context.Context, agent, from, method string, params json.RawMessage) (any, error) {
		if method == "slow" {
			entered <- struct{}{}
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return "ok", nil
	})
	budget := strangers.New(strangers.Config{Known: func(_ context.Context, _, from string) bool { return from == owner.PK }})
	s := nostrrpc.NewServer(nostrrpc.ServerConfig{Source: b.relay, Publish: b.relay.Publish, Keys: b.lookup,
		Handler: h, Logger: quietLogger(t), Gate: budget, Workers: 2})
	testkit.Run(t, "nostrrpc server", s.Run, s.Ready())

	slow := testkit.NewKey(t)
	if err := b.relay.Publish(context.Background(), rawRequest(t, slow, bob.PK, `{"jsonrpc":"2.0","id":1,"method":"slow"}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-entered: // it holds the strangers' only worker
	case <-time.After(10 * time.Second):
		t.Fatal("the slow call did not start")
	}
	other := testkit.NewKey(t)
	req := rawRequest(t, other, bob.PK, `{"jsonrpc":"2.0","id":2,"method":"echo"}`)
	if resp := exchange(t, b, other, bob.PK, req); resp.Error == nil || resp.Error.Code != nostrrpc.CodeRateLimited {
		t.Fatalf("a second stranger's call: %+v, want -32029", resp.Error)
	}
	req = rawRequest(t, owner, bob.PK, `{"jsonrpc":"2.0","id":3,"method":"echo"}`)
	if resp := exchange(t, b, owner, bob.PK, req); resp.Error != nil {
		t.Fatalf("the owner's call: %+v", resp.Error)
	}
}
