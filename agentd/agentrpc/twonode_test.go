package agentrpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/agentrpc"
	"github.com/agentnode/agentnode/agentd/consent"
	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/agentd/nostrrpc"
	"github.com/agentnode/agentnode/agentd/tasks"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/internal/testkit/testrelay"
	"github.com/agentnode/agentnode/relay"
)

var frank = named("frank") // second agent on node B, ranked below bob

// rpcError is a JSON-RPC error as a test reads it.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// call POSTs one request to url and returns its result or error.
func call(t testing.TB, url, method string, params any) (json.RawMessage, *rpcError) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: %s: %v", method, b, err)
	}
	return out.Result, out.Error
}

func mustCall(t testing.TB, url, method string, params, into any) {
	t.Helper()
	res, e := call(t, url, method, params)
	if e != nil {
		t.Fatalf("%s: error %d %s %s", method, e.Code, e.Message, e.Data)
	}
	if into != nil {
		if err := json.Unmarshal(res, into); err != nil {
			t.Fatal(err)
		}
	}
}

// twoNodes is node A (alice) and node B (bob, frank) on loopback: B's
// relay behind a real HTTP server, B answering kind 25910 with its
// Service, A calling through a nostrrpc.Client. B's agents' heartbeats
// reach A's relay as peer sync would bring them.
type twoNodes struct {
	aURL      string
	aClock    *testkit.Clock
	aDir      *directory.Directory
	aTasks    *tasks.Store
	aConsent  *consent.Consent
	aCaller   *nostrrpc.Client
	bRelay    *relay.Relay
	bConsent  *consent.Consent
	bEcho     *echo
	aRelay    *relay.Relay
	aTmp      string
	aSvc      *agentrpc.Service
	aStop     func() // of aSvc's Run
	aHandler  *swap
	heartbeat func()
}

// swap is an http.Handler whose target a test replaces (a node restart).
type swap struct{ h atomic.Pointer[http.Handler] }

func (s *swap) set(h http.Handler)                               { s.h.Store(&h) }
func (s *swap) ServeHTTP(w http.ResponseWriter, r *http.Request) { (*s.h.Load()).ServeHTTP(w, r) }

// startA opens node A's stores from aTmp and runs its Service.
func (n *twoNodes) startA(t testing.TB) {
	n.aTasks = openTasks(t, n.aTmp, nil)
	n.aConsent = openConsent(t, n.aTmp, consent.OpDelegateRemote)
	n.aSvc = agentrpc.New(agentrpc.Config{Token: testToken, Directory: n.aDir, Tasks: n.aTasks, Consent: n.aConsent, Messenger: newEcho(alice),
		Caller: n.aCaller, Local: localSet(alice), Keys: keysOf(alice), Logger: quiet})
	n.aStop = testkit.Run(t, "a acp", n.aSvc.Run, n.aSvc.Ready())
	n.aHandler.set(withToken(n.aSvc))
}

// stopA stops node A's Service and closes its stores, as a node
// shutting down does.
func (n *twoNodes) stopA() {
	n.aStop()
	n.aTasks.Close()
	n.aConsent.Close()
}

func startTwoNodes(t testing.TB) *twoNodes {
	n := &twoNodes{aRelay: testrelay.Open(t), bRelay: testrelay.Open(t), aClock: testkit.NewClock(time.Now())}
	bSrv := httptest.NewServer(n.bRelay)
	t.Cleanup(bSrv.Close)
	bURL := "ws" + strings.TrimPrefix(bSrv.URL, "http")

	// node B
	bLocal := localSet(bob, frank)
	bDir := startDirectory(t, n.bRelay, bLocal, nil)
	bTmp := t.TempDir()
	n.bConsent = openConsent(t, bTmp, consent.OpDelegateRemote)
	n.bEcho = newEcho(bob, frank)
	bSvc := agentrpc.New(agentrpc.Config{Token: testToken, Directory: bDir, Tasks: openTasks(t, bTmp, nil), Consent: n.bConsent,
		Messenger: n.bEcho, Local: bLocal, Keys: keysOf(bob, frank), Logger: quiet})
	testkit.Run(t, "b acp", bSvc.Run, bSvc.Ready())
	lookup := func(ctx context.Context, pk string) (string, bool) {
		sk, err := keysOf(bob, frank)(ctx, pk)
		return sk, err == nil
	}
	rpcSrv := nostrrpc.NewServer(nostrrpc.ServerConfig{Source: n.bRelay, Publish: n.bRelay.Publish, Keys: lookup, Handler: bSvc, Logger: quiet})
	testkit.Run(t, "b 25910 server", rpcSrv.Run, rpcSrv.Ready())

	// node A
	aLocal := localSet(alice)
	n.aDir = startDirectory(t, n.aRelay, aLocal, n.aClock.Now)
	n.aTmp = t.TempDir()
	n.aCaller = nostrrpc.NewClient(nostrrpc.ClientConfig{Relays: []string{bURL}, Keys: keysOf(alice), Logger: quiet})
	t.Cleanup(func() { n.aCaller.Close() })
	n.aHandler = &swap{}
	n.startA(t)
	aSrv := httptest.NewServer(n.aHandler)
	t.Cleanup(aSrv.Close)
	n.aURL = aSrv.URL

	n.heartbeat = func() {
		for _, k := range []key{bob, frank} {
			hb := heartbeat(t, k, "active", 0, 2, "analysis")
			publish(t, n.bRelay, hb)
			publish(t, n.aRelay, hb) // what peer sync does
		}
	}
	n.heartbeat()
	publish(t, n.aRelay, heartbeat(t, alice, "active", 0, 2, "chat"))
	for _, k := range []key{alice, bob, frank} {
		testkit.WaitFor(t, testWait, k.name+" in A's directory", listed(n.aDir, k))
	}
	return n
}

func delegateParams(wait bool, text string) map[string]any {
	return map[string]any{"source": alice.pk, "wait": wait, "task": map[string]any{"type": "analysis",
		"requirements": map[string]any{"capabilities": []string{"analysis"}}, "payload": map[string]any{"text": text}}}
}

func TestTwoNodes_DelegationConsentMetricsHeartbeats(t *testing.T) {
	n := startTwoNodes(t)
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()

	// alice ranks bob above frank.
	for k, score := range map[key]float64{bob: 9, frank: 4} {
		mustCall(t, n.aURL, "tools/call", map[string]any{"name": "agentEvaluate",
			"arguments": map[string]any{"agentId": k.pk, "evaluator": alice.pk, "score": score}}, nil)
	}

	// A remote delegation waits for the owner's approval.
	var res agentrpc.DelegateResult
	mustCall(t, n.aURL, "agent/delegate", delegateParams(false, "analyse X"), &res)
	if res.Task.Status != tasks.StatusPending || res.Task.ApprovalID == "" || res.Task.Assignee != bob.pk || !res.Task.Remote {
		t.Fatalf("remote delegation = %+v; want pending for approval, assigned to bob", res.Task)
	}
	if _, err := n.aConsent.Approve(ctx, res.Task.ApprovalID); err != nil {
		t.Fatal(err)
	}
	done, err := n.aTasks.Wait(ctx, res.Task.ID)
	if err != nil || done.Status != tasks.StatusDone || !strings.Contains(string(done.Result), "bob heard: analyse X") {
		t.Fatalf("after approval: %+v, %v; want done with bob's answer", done, err)
	}

	// Metrics on A count the task bob did.
	var read struct {
		Contents []struct{ Text string } `json:"contents"`
	}
	mustCall(t, n.aURL, "resources/read", map[string]any{"uri": "agent://metrics/" + bob.pk}, &read)
	var m agentrpc.MetricsView
	if err := json.Unmarshal([]byte(read.Contents[0].Text), &m); err != nil {
		t.Fatal(err)
	}
	if m.Tasks.Done != 1 || m.QualityScore != 9 || !m.Available {
		t.Fatalf("bob's metrics on A = %+v", m)
	}

	// Denied: the task fails, nothing reaches B.
	before := n.bEcho.count()
	mustCall(t, n.aURL, "agent/delegate", delegateParams(false, "not this one"), &res)
	if _, err := n.aConsent.Deny(ctx, res.Task.ApprovalID, "no"); err != nil {
		t.Fatal(err)
	}
	denied, _ := n.aTasks.Wait(ctx, res.Task.ID)
	if denied.Status != tasks.StatusFailed || !strings.Contains(denied.Error, "denied") || n.bEcho.count() != before {
		t.Fatalf("after deny: %+v (B ran %d more)", denied, n.bEcho.count()-before)
	}

	// B stops heartbeating: once its heartbeats are older than the TTL,
	// its agents leave A's ranking and nothing matches. A's clock moves
	// past the TTL counted from now, after every heartbeat was stamped
	// (not from when the clock was made: on a busy machine the setup
	// outlasts the second that left, and bob stayed available).
	n.aClock.Set(time.Now().Add(directory.DefaultHeartbeatTTL + time.Second))
	testkit.WaitFor(t, testWait, "bob to drop out of A's ranking", func() bool { a, _ := n.aDir.Get(bob.pk); return !a.Available })
	if _, e := call(t, n.aURL, "agent/delegate", delegateParams(false, "anyone?")); e == nil || e.Code != agentrpc.CodeAgentUnavailable {
		t.Fatalf("delegation with B silent: %+v, want -32003", e)
	}
	var found agentrpc.ToolResult
	mustCall(t, n.aURL, "tools/call", map[string]any{"name": "agentSearch", "arguments": map[string]any{"capabilities": []string{"analysis"}}}, &found)
	if found.Content[0].Text != "Found 0 matching agents" {
		t.Fatalf("agentSearch with B silent: %q", found.Content[0].Text)
	}
}

func TestTwoNodes_MessageAndRevoke(t *testing.T) {
	n := startTwoNodes(t)
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	msg := func(text, corr string) map[string]any {
		return map[string]any{"source": alice.pk, "target": bob.pk, "_meta": map[string]any{"correlationId": corr},
			"content": map[string]any{"type": "request", "payload": map[string]any{"messages": []map[string]any{{"text": text}}}}}
	}

	// The correlation id survives the kind-25910 round trip: B's own answer carries it.
	params, _ := json.Marshal(msg("raw", "corr-wire"))
	raw, err := n.aCaller.CallAgent(ctx, alice.pk, bob.pk, "agent/message", params)
	if err != nil || !strings.Contains(string(raw), `"correlationId":"corr-wire"`) || !strings.Contains(string(raw), "bob heard: raw") {
		t.Fatalf("B's answer over the wire = %s, %v", raw, err)
	}
	var res agentrpc.MessageResult
	mustCall(t, n.aURL, "agent/message", msg("hello over nostr", "corr-remote-1"), &res)
	if res.Meta.CorrelationID != "corr-remote-1" || res.Content.Payload.Messages[0].Text != "bob heard: hello over nostr" || res.Source != bob.pk {
		t.Fatalf("remote agent/message = %+v", res)
	}

	// B's owner revokes bob: he answers nothing, to messages or tasks.
	if _, err := n.bConsent.Revoke(ctx, bob.pk, "test"); err != nil {
		t.Fatal(err)
	}
	if _, e := call(t, n.aURL, "agent/message", msg("still there?", "corr-2")); e == nil || e.Code != agentrpc.CodeAgentRevoked {
		t.Fatalf("message to revoked bob: %+v, want -32005", e)
	}
	var dres agentrpc.DelegateResult
	mustCall(t, n.aURL, "agent/delegate", map[string]any{"source": alice.pk, "target": bob.pk, "task": map[string]any{"payload": map[string]any{"text": "x"}}}, &dres)
	if _, err := n.aConsent.Approve(ctx, dres.Task.ApprovalID); err != nil {
		t.Fatal(err)
	}
	failed, _ := n.aTasks.Wait(ctx, dres.Task.ID)
	if failed.Status != tasks.StatusFailed || !strings.Contains(failed.Error, "revoked") {
		t.Fatalf("task for revoked bob = %+v", failed)
	}

	// A's owner revokes bob on A too: A refuses before sending anything.
	if _, err := n.aConsent.Revoke(ctx, bob.pk, "test"); err != nil {
		t.Fatal(err)
	}
	if _, e := call(t, n.aURL, "agent/message", msg("x", "corr-3")); e == nil || e.Code != agentrpc.CodeAgentRevoked || strings.HasPrefix(e.Message, "remote") {
		t.Fatalf("message to bob revoked on A: %+v, want a local -32005", e)
	}
}

// TestTwoNodes_Restart: tasks survive a restart of node A. One waiting for
// the owner's consent waits again and proceeds once approved; one that was
// running fails (its runner is gone; re-running could do the work twice).
func TestTwoNodes_Restart(t *testing.T) {
	n := startTwoNodes(t)
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	var res agentrpc.DelegateResult
	mustCall(t, n.aURL, "agent/delegate", delegateParams(false, "after the restart"), &res)
	if res.Task.Status != tasks.StatusPending || res.Task.ApprovalID == "" {
		t.Fatalf("delegation = %+v, want pending for approval", res.Task)
	}
	running, err := n.aTasks.Create(ctx, tasks.Task{ID: "was-running", Assignee: bob.pk})
	if err == nil {
		_, err = n.aTasks.Transition(ctx, running.ID, tasks.StatusAssigned, nil)
	}
	if err == nil {
		_, err = n.aTasks.Transition(ctx, running.ID, tasks.StatusRunning, nil)
	}
	if err != nil {
		t.Fatal(err)
	}

	n.stopA()
	n.startA(t)

	if got, err := n.aTasks.Get(ctx, "was-running"); err != nil || got.Status != tasks.StatusFailed || !strings.Contains(got.Error, "restart") {
		t.Fatalf("the running task after restart = %+v, %v", got, err)
	}
	pending, err := n.aTasks.Get(ctx, res.Task.ID)
	if err != nil || pending.Status != tasks.StatusPending {
		t.Fatalf("the pending task after restart = %+v, %v", pending, err)
	}
	if _, err := n.aConsent.Approve(ctx, res.Task.ApprovalID); err != nil {
		t.Fatal(err)
	}
	done, err := n.aTasks.Wait(ctx, res.Task.ID)
	if err != nil || done.Status != tasks.StatusDone || !strings.Contains(string(done.Result), "bob heard: after the restart") {
		t.Fatalf("after restart and approval: %+v, %v", done, err)
	}
	_, e := call(t, n.aURL, "resources/read", map[string]any{"uri": "agent://tasks/" + res.Task.ID})
	if e != nil {
		t.Fatalf("read a task on a node without private.state in its policy: %+v", e)
	}
}
