package agentrpc_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/agentrpc"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/internal/testkit/testrelay"
)

// silentCaller is a remote route that never answers: it waits for the
// caller's deadline, as a node that dropped off the network does.
type silentCaller struct{ calls atomic.Int32 }

func (s *silentCaller) CallAgent(ctx context.Context, _, _, _ string, _ json.RawMessage) (json.RawMessage, error) {
	s.calls.Add(1)
	<-ctx.Done()
	return nil, ctx.Err()
}

// agent/message to an agent the directory does not know answers -32002 at
// once, without trying the network; to one it knows that does not answer,
// -32003 after the remote timeout (seconds, not the two minutes a local
// task may take).
func TestMessage_UnknownAndSilentRemote(t *testing.T) {
	rl := testrelay.Open(t)
	local := localSet(alice)
	dir := startDirectory(t, rl, local, nil)
	publish(t, rl, heartbeat(t, carol, "active", 0, 2, "chat"))
	testkit.WaitFor(t, testWait, "carol in the directory", listed(dir, carol))
	caller := &silentCaller{}
	svc := agentrpc.New(agentrpc.Config{Token: testToken, Directory: dir, Tasks: openTasks(t, t.TempDir(), nil),
		Messenger: newEcho(alice), Caller: caller, Local: local, Keys: keysOf(alice), Logger: quiet,
		RemoteTimeout: 300 * time.Millisecond})
	testkit.Run(t, "acp", svc.Run, svc.Ready())
	srv := httptest.NewServer(withToken(svc))
	t.Cleanup(srv.Close)
	msg := func(target string) map[string]any {
		return map[string]any{"source": alice.pk, "target": target,
			"content": map[string]any{"type": "request", "payload": map[string]any{"messages": []map[string]any{{"text": "hi"}}}}}
	}

	if _, e := call(t, srv.URL, "agent/message", msg(erin.pk)); e == nil || e.Code != agentrpc.CodeAgentNotFound {
		t.Fatalf("message to an unknown agent: %+v, want -32002", e)
	}
	if n := caller.calls.Load(); n != 0 {
		t.Fatalf("the unknown agent was tried over the network %d times", n)
	}
	if _, e := call(t, srv.URL, "agent/message", msg(carol.pk)); e == nil || e.Code != agentrpc.CodeAgentUnavailable ||
		!strings.Contains(e.Message+string(e.Data), "300ms") {
		t.Fatalf("message to a silent known agent: %+v, want -32003 naming the 300ms timeout", e)
	}
}
