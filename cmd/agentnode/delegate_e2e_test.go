package main

import (
	"encoding/json"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/capabilities/llm/llmtest"
	"github.com/agentnode/agentnode/internal/testkit"
)

// Delegation between two served nodes on loopback (issue 6), each with
// --peer to the other: A's directory gets B's agents' heartbeats and B's
// gets A's; A's agent delegates, through A's /acp, a
// task whose requirements name the capability B's agent has; the default
// policy holds it for the owner's consent; `agentnode consent approve`
// against A lets it run on B (kind 25910), whose scripted model answers;
// A's metrics of B's agent count it. When B shuts down, its offline
// heartbeats take its agent out of A's ranking.

const delegateAnswer = "B's answer: forty-two"

// taskView is the part of a task these tests read.
type taskView struct {
	ID         string `json:"id"`
	Source     string `json:"source"`
	Assignee   string `json:"assignee"`
	Remote     bool   `json:"remote"`
	Status     string `json:"status"`
	ApprovalID string `json:"approvalId"`
	Error      string `json:"error"`
	Result     struct {
		Messages []struct {
			Text string `json:"text"`
		} `json:"messages"`
	} `json:"result"`
}

// readResource is resources/read of uri on url: the JSON text of its one
// content, decoded into v.
func readResource(t *testing.T, url, token, uri string, v any) {
	t.Helper()
	var res struct {
		Contents []struct {
			URI  string `json:"uri"`
			Text string `json:"text"`
		} `json:"contents"`
	}
	mustResult(t, "resources/read "+uri, rpcPost(t, url, token, "resources/read", map[string]any{"uri": uri}), &res)
	if len(res.Contents) != 1 || res.Contents[0].URI != uri {
		t.Fatalf("resources/read %s = %+v", uri, res)
	}
	if err := json.Unmarshal([]byte(res.Contents[0].Text), v); err != nil {
		t.Fatalf("resources/read %s: %s: %v", uri, res.Contents[0].Text, err)
	}
}

// waitTaskFinal polls agent://tasks/{id} on url until the task is final.
func waitTaskFinal(t *testing.T, url, token, id string) taskView {
	t.Helper()
	var task taskView
	testkit.WaitFor(t, 2*e2eWait, "task "+id+" done, failed or expired", func() bool {
		task = taskView{}
		readResource(t, url, token, "agent://tasks/"+id, &task)
		return task.Status == "done" || task.Status == "failed" || task.Status == "expired"
	})
	return task
}

// startDelegatePair starts B (--peer A, the scripted model, an agent with
// the note package, its heartbeat out) and A (--peer B, an agent), and
// waits until A's directory ranks B's agent under the note capability and
// B's lists A's agent. Nothing here forces a heartbeat: installing an
// agent or a capability makes the node beat at once.
func startDelegatePair(t *testing.T, srv *llmtest.Server) (a, b endpointNode) {
	t.Helper()
	cfg := configFile(t, map[string]any{"model": modelSection(srv)})
	aAddr := freeLoopbackAddr(t) // each node names the other with --peer
	b = startEndpointNode(t, "Note Keeper", "--config", cfg, "--peer", "ws://"+aAddr)
	b.installSigned(t, mustReadFile(t, notePackageFile(t, t.TempDir(), "1.0.0", "")))
	a = startEndpointNode(t, "Delegator", "--listen", aAddr, "--peer", "ws://"+b.Addr())
	waitSearchFinds(t, a.url(pathACP), a.token, b.agentPK(), map[string]any{"capabilities": []string{"note"}})
	// The other way: A's agent's heartbeat reaches B (A pushes its agents'
	// events, B pulls directory interests), whose directory lists it.
	waitSearchFinds(t, b.url(pathACP), b.token, a.agentPK(), map[string]any{})
	return a, b
}

func TestDelegate_E2E_RemoteWithConsent(t *testing.T) {
	srv := llmtest.NewServer(t).Always(reply(delegateAnswer))
	a, b := startDelegatePair(t, srv)
	acpURL := a.url(pathACP)

	const taskID = "e2e-remote-task-1"
	var del struct {
		Task taskView `json:"task"`
		Meta struct {
			CorrelationID string `json:"correlationId"`
		} `json:"_meta"`
	}
	mustResult(t, "agent/delegate", rpcPost(t, acpURL, a.token, "agent/delegate", map[string]any{
		"source": a.agentPK(),
		"task": map[string]any{"id": taskID, "type": "analysis",
			"requirements": map[string]any{"capabilities": []string{"note"}},
			"payload":      map[string]any{"text": "What is six times seven?"}},
		"_meta": map[string]any{"correlationId": "corr-e2e-1"}}), &del)
	if del.Task.ID != taskID || del.Task.Status != "pending" || del.Task.Assignee != b.agentPK() || !del.Task.Remote ||
		del.Task.ApprovalID == "" || del.Meta.CorrelationID != "corr-e2e-1" {
		t.Fatalf("agent/delegate = %+v; want the task pending for consent, assigned to B's agent %s", del, b.agentPK())
	}
	// Nothing runs before the owner says so: B's model is not asked.
	var pending taskView
	readResource(t, acpURL, a.token, "agent://tasks/"+taskID, &pending)
	if pending.Status != "pending" || len(srv.Requests()) != 0 {
		t.Fatalf("before approval: task %s, %d model requests on B", pending.Status, len(srv.Requests()))
	}

	if out := mustCLI(t, a.env(), "consent", "list", "--status", "pending"); !strings.Contains(out, del.Task.ApprovalID) ||
		!strings.Contains(out, "delegate.remote") {
		t.Fatalf("consent list on A:\n%s", out)
	}
	if out := mustCLI(t, a.env(), "consent", "approve", del.Task.ApprovalID); !strings.HasPrefix(out, "approved "+del.Task.ApprovalID) {
		t.Fatalf("consent approve: %s", out)
	}

	done := waitTaskFinal(t, acpURL, a.token, taskID)
	if done.Status != "done" || len(done.Result.Messages) != 1 || done.Result.Messages[0].Text != delegateAnswer {
		t.Fatalf("the task on A = %+v; want done with B's answer %q", done, delegateAnswer)
	}
	reqs := srv.Requests()
	if len(reqs) == 0 || !strings.Contains(string(reqs[len(reqs)-1].Raw), "six times seven") {
		t.Fatalf("B's model got %d requests; want the task's text", len(reqs))
	}

	var metrics struct {
		Tasks struct {
			Assigned int `json:"tasksAssigned"` // assigned or running now
			Done     int `json:"tasksDone"`
			Failed   int `json:"tasksFailed"`
		} `json:"tasks"`
	}
	readResource(t, acpURL, a.token, "agent://metrics/"+b.agentPK(), &metrics)
	if metrics.Tasks.Done != 1 || metrics.Tasks.Assigned != 0 || metrics.Tasks.Failed != 0 {
		t.Fatalf("A's metrics of B's agent = %+v; want one task done and none in flight", metrics.Tasks)
	}

	// B shuts down: its offline heartbeats reach A before its relay closes,
	// and its agent leaves A's ranking — even when the offline heartbeat is
	// made in the same second as the last active one (the heartbeater keeps
	// created_at increasing per agent).
	b.close()
	testkit.WaitFor(t, e2eWait, "B's agent to leave A's ranking", func() bool {
		r := rpcPost(t, acpURL, a.token, "tools/call", map[string]any{"name": "agentSearch",
			"arguments": map[string]any{"capabilities": []string{"note"}}})
		return r.Error == nil && !slices.Contains(searchedAgents(t, r.Result), b.agentPK())
	})
	r := rpcPost(t, acpURL, a.token, "agent/delegate", map[string]any{"source": a.agentPK(),
		"task": map[string]any{"requirements": map[string]any{"capabilities": []string{"note"}}, "payload": map[string]any{"text": "again"}}})
	if r.Error == nil || r.Error.Code != -32003 {
		t.Fatalf("delegating with B gone = %s %+v; want -32003 (no available agent)", r.Result, r.Error)
	}
}

// freeLoopbackAddr is a loopback address with a port free a moment ago, for
// a node that another must name (--peer) before it starts.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}
