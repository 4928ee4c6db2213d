package agentrpc_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/agentrpc"
	"github.com/agentnode/agentnode/agentd/consent"
	"github.com/agentnode/agentnode/agentd/tasks"
	"github.com/agentnode/agentnode/internal/testkit"
)

// stuck is a Messenger that never answers before its context ends.
type stuck struct{ started chan struct{} }

func (s stuck) Message(ctx context.Context, agent, conversation, text string) (string, error) {
	s.started <- struct{}{}
	<-ctx.Done()
	return "", ctx.Err()
}

// TestDelegate_DeadlineExpires: a task still running when its deadline
// passes (on the task store's injected clock) is expired by the store's
// deadline goroutine, and stays expired when the agent gives up later.
func TestDelegate_DeadlineExpires(t *testing.T) {
	f := newFixture(t)
	clk := testkit.NewClock(time.Now().UTC())
	st := openTasks(t, t.TempDir(), clk.Now)
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	testkit.Run(t, "deadline sweep", st.Run, nil)
	agent := stuck{started: make(chan struct{}, 1)}
	svc := agentrpc.New(agentrpc.Config{Token: testToken, Directory: f.dir, Tasks: st, Messenger: agent, Local: localSet(alice, bob), Logger: quiet})
	stopSvc := testkit.Run(t, "acp", svc.Run, svc.Ready())
	srv := httptest.NewServer(withToken(svc))
	defer srv.Close()

	deadline := clk.Now().Add(time.Minute)
	var res agentrpc.DelegateResult
	mustCall(t, srv.URL, "agent/delegate", map[string]any{"target": bob.pk, "task": map[string]any{
		"requirements": map[string]any{"constraints": map[string]any{"deadline": deadline}}, "payload": map[string]any{"text": "slow"}}}, &res)
	<-agent.started
	if got, _ := st.Get(ctx, res.Task.ID); got.Status != tasks.StatusRunning {
		t.Fatalf("status before the deadline = %s, want running", got.Status)
	}
	clk.Advance(2 * time.Minute)
	got, err := st.Wait(ctx, res.Task.ID)
	if err != nil || got.Status != tasks.StatusExpired {
		t.Fatalf("after the deadline: %+v, %v; want expired", got, err)
	}
	stopSvc() // the stuck agent gives up now
	if got, _ := st.Get(ctx, res.Task.ID); got.Status != tasks.StatusExpired {
		t.Fatalf("after the agent gave up: %s, want still expired", got.Status)
	}
}

// TestMarkedMethod: a method the owner marks in the policy
// ("method:tools/call") needs an approval; with it the call goes through.
func TestMarkedMethod(t *testing.T) {
	f := newFixture(t)
	owner := openConsent(t, t.TempDir(), consent.MethodOp("tools/call"))
	svc := agentrpc.New(agentrpc.Config{Token: testToken, Directory: f.dir, Tasks: f.tasks, Messenger: f.echo, Consent: owner, Logger: quiet})
	srv := httptest.NewServer(withToken(svc))
	defer srv.Close()
	args := map[string]any{"name": "agentSearch", "arguments": map[string]any{}}
	_, e := call(t, srv.URL, "tools/call", args)
	if e == nil || e.Code != agentrpc.CodeConsentRequired {
		t.Fatalf("marked method without approval: %+v, want -32004", e)
	}
	var data agentrpc.ConsentData
	json.Unmarshal(e.Data, &data)
	if _, err := owner.Approve(context.Background(), data.ApprovalID); err != nil {
		t.Fatal(err)
	}
	args["_meta"] = map[string]any{"approvalId": data.ApprovalID}
	mustCall(t, srv.URL, "tools/call", args, nil)
	mustCall(t, srv.URL, "tools/list", map[string]any{}, nil) // not marked
}
