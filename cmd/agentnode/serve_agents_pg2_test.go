package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/agentpg"
	"github.com/agentnode/agentnode/agentd/agentrpc"
	"github.com/agentnode/agentnode/agentd/tasks"
	"github.com/agentnode/agentnode/internal/testkit"
)

// installDef posts an install of def for the pair's owner to n's HTTP API.
func (p *pgPair) installDef(n *pgNode, token, def string) (agentd.Installed, error) {
	body, _ := json.Marshal(map[string]any{"definition": def, "owner": p.owner.PK})
	req, _ := http.NewRequest(http.MethodPost, n.url("/api/agents"), bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return agentd.Installed{}, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var inst agentd.Installed
	if err := json.Unmarshal(raw, &inst); err != nil || inst.Agent.PubKey == "" {
		return inst, fmt.Errorf("install through %s: %d %s", n.addr, resp.StatusCode, raw)
	}
	return inst, nil
}

// TestServe_PostgresAgents_InstallRace: the same install (definition,
// owner, name) sent to both instances at once installs one agent: the
// database decides (agentd.InstallRecords), not each instance's copy of
// the records. Five definitions, each raced through both instances.
func TestServe_PostgresAgents_InstallRace(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary twice")
	}
	p := startPGPair(t, pgTestTTL)
	token := p.nodes[0].token(t)
	const defs = 5
	for round := range defs {
		def := publishDefinition(t, p.nodes[round%2])
		var wg sync.WaitGroup
		var got [2]agentd.Installed
		var errs [2]error
		start := make(chan struct{})
		for i, n := range p.nodes {
			wg.Go(func() {
				<-start
				got[i], errs[i] = p.installDef(n, token, def)
			})
		}
		close(start)
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if got[0].Agent.PubKey != got[1].Agent.PubKey {
			t.Fatalf("definition %d: the instances installed two agents, %s and %s", round, got[0].Agent.PubKey, got[1].Agent.PubKey)
		}
		if got[0].Created == got[1].Created {
			t.Fatalf("definition %d: created %v and %v, want exactly one true", round, got[0].Created, got[1].Created)
		}
	}
	for i, n := range p.nodes {
		env := map[string]string{"AGENTNODE_NODE": n.url(""), "AGENTNODE_DATA": n.data}
		var list struct {
			Agents []agentd.Agent `json:"agents"`
		}
		decodeJSON(t, mustCLI(t, env, "agent", "list", "--json"), &list)
		if len(list.Agents) != defs {
			t.Fatalf("agent list on instance %d: %d agents, want %d", i+1, len(list.Agents), defs)
		}
	}
}

// TestServe_PostgresAgents_ACPCallsForwarded: /acp calls naming an agent
// the other instance runs, over a websocket and in JSON-RPC batches (HTTP
// and websocket) sent to the instance not running it, are each forwarded
// to the holder (its log line per call) and answered in order; calls
// naming no agent are served where they land.
func TestServe_PostgresAgents_ACPCallsForwarded(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary twice")
	}
	p := startPGPair(t, pgTestTTL)
	agent := p.installOn(t, p.nodes[0])
	_, hi := p.holder(t, agent, "")
	holder, other := p.nodes[hi], p.nodes[1-hi]
	token := holder.token(t)
	testkit.WaitFor(t, pgWait, "the holder answering agent/message", func() bool {
		_, _, err := acpMessage(holder, token, agent, "ready?")
		return err == nil
	})
	message := func(text string) map[string]any {
		return map[string]any{"target": agent, "content": messageContent(text)}
	}
	delegate := func(text string) map[string]any {
		return map[string]any{"target": agent, "wait": true, "task": map[string]any{"payload": map[string]any{"text": text}}}
	}
	answerOf := func(what string, r rpcReply) string {
		t.Helper()
		var res struct {
			messageResult
			Task struct {
				Status string `json:"status"`
				Result struct {
					Messages []struct {
						Text string `json:"text"`
					} `json:"messages"`
				} `json:"result"`
			} `json:"task"`
		}
		mustResult(t, what, r, &res)
		if m := res.texts(); len(m) > 0 {
			return m[0]
		}
		if m := res.Task.Result.Messages; res.Task.Status == "done" && len(m) > 0 {
			return m[0].Text
		}
		t.Fatalf("%s: no answer in %s", what, r.Result)
		return ""
	}
	forwarded := 0

	// Over a websocket to the other instance.
	conn, _, err := dialWS(t, "ws://"+other.addr+pathACP, token)
	if err != nil {
		t.Fatal(err)
	}
	if got := answerOf("agent/message over ws", wsCall(t, conn, "agent/message", message("ws message"))); got != "pong: ws message" {
		t.Fatalf("agent/message over ws = %q", got)
	}
	if got := answerOf("agent/delegate over ws", wsCall(t, conn, "agent/delegate", delegate("ws task"))); got != "pong: ws task" {
		t.Fatalf("agent/delegate over ws = %q", got)
	}
	forwarded += 2

	// Batches, over HTTP and over the websocket: answers in order, by id.
	batch, _ := json.Marshal([]map[string]any{
		{"jsonrpc": "2.0", "id": 1, "method": "agent/message", "params": message("batch 1")},
		{"jsonrpc": "2.0", "id": 2, "method": "ping"},
		{"jsonrpc": "2.0", "id": 3, "method": "agent/delegate", "params": delegate("batch 3")},
		{"jsonrpc": "2.0", "id": 4, "method": "agent/message", "params": message("batch 4")},
	})
	checkBatch := func(how string, raw []byte) {
		t.Helper()
		var replies []rpcReply
		if err := json.Unmarshal(raw, &replies); err != nil || len(replies) != 4 {
			t.Fatalf("batch over %s: %s (%v)", how, raw, err)
		}
		for i, r := range replies {
			if string(r.ID) != fmt.Sprint(i+1) {
				t.Fatalf("batch over %s: answer %d has id %s", how, i, r.ID)
			}
		}
		for _, i := range []int{0, 2, 3} {
			want := fmt.Sprintf("pong: batch %d", i+1)
			if got := answerOf(fmt.Sprintf("batch over %s, call %d", how, i+1), replies[i]); got != want {
				t.Fatalf("batch over %s, call %d = %q, want %q", how, i+1, got, want)
			}
		}
		if replies[1].Error != nil {
			t.Fatalf("batch over %s: ping failed: %+v", how, replies[1].Error)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, other.url(pathACP), bytes.NewReader(batch))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	checkBatch("HTTP", raw)
	wsSend(t, conn, string(batch))
	checkBatch("websocket", wsRead(t, conn))
	forwarded += 6

	// Each call naming the agent was forwarded by the other instance, on
	// its own; the holder forwarded none. (The log reaches the test through
	// the process's pipe, so its lines may trail the answers.)
	n := 0
	testkit.WaitFor(t, pgWait, "the other instance's forwarding log lines", func() bool {
		n = strings.Count(other.logs.String(), "acp call forwarded to the agent's instance")
		return n >= forwarded
	})
	if n != forwarded {
		t.Fatalf("the other instance forwarded %d calls, want %d:\n%s", n, forwarded, other.logs.String())
	}
	if strings.Contains(holder.logs.String(), "acp call forwarded") {
		t.Fatal("the holder forwarded a call")
	}
}

// TestServe_PostgresAgents_TasksFollowTheAgent: the agent's holder is
// SIGKILLed while it executes one of the agent's tasks, and a task is left
// assigned to the agent while it runs nowhere (as an instance that does not
// run an agent leaves the tasks delegated through it). The survivor, once it
// runs the agent, executes the assigned task and fails the one the dead
// holder was running ("interrupted"), running neither twice.
func TestServe_PostgresAgents_TasksFollowTheAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary twice")
	}
	blocked, release := make(chan struct{}, 1), make(chan struct{})
	var blockedCalls atomic.Int32
	p := startPGPairWith(t, pgTestTTL, func(text string) string {
		if strings.Contains(text, "block me") {
			blockedCalls.Add(1)
			select {
			case blocked <- struct{}{}:
			default:
			}
			<-release
		}
		return "pong: " + text
	})
	t.Cleanup(func() { close(release) }) // before the model server closes
	agent := p.installOn(t, p.nodes[0])
	first, hi := p.holder(t, agent, "")
	holder, survivor := p.nodes[hi], p.nodes[1-hi]
	token := holder.token(t)
	testkit.WaitFor(t, pgWait, "the holder answering agent/message", func() bool {
		_, _, err := acpMessage(holder, token, agent, "ready?")
		return err == nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), pgWait)
	defer cancel()
	db, err := agentpg.Open(ctx, p.url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	store, err := tasks.Open(ctx, tasks.Config{Backend: db.Tasks(), Poll: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()

	// The holder executes a task whose chat does not end.
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "agent/delegate", "params": map[string]any{
		"target": agent, "task": map[string]any{"payload": map[string]any{"text": "block me"}}}})
	req, _ := http.NewRequest(http.MethodPost, holder.url(pathACP), bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Result agentrpc.DelegateResult `json:"result"`
	}
	err = json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	cut := out.Result.Task.ID
	if err != nil || cut == "" {
		t.Fatalf("agent/delegate: %v %+v", err, out)
	}
	select {
	case <-blocked:
	case <-ctx.Done():
		t.Fatal("the holder's chat for the task never reached the model")
	}
	if got, err := store.Get(ctx, cut); err != nil || got.Status != tasks.StatusRunning {
		t.Fatalf("the task under way: %+v, %v; want running", got, err)
	}
	holder.kill(t)

	// A task left for the agent while its holder is dead.
	left, err := store.Create(ctx, tasks.Task{Assignee: agent, Payload: json.RawMessage(`{"text":"left for you"}`)})
	if err == nil {
		left, err = store.Transition(ctx, left.ID, tasks.StatusAssigned, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	got, err := store.Wait(ctx, left.ID)
	if err != nil || got.Status != tasks.StatusDone || !strings.Contains(string(got.Result), "pong: left for you") {
		t.Fatalf("the task left for the agent: %+v, %v; want done by the survivor", got, err)
	}
	got, err = store.Wait(ctx, cut)
	if err != nil || got.Status != tasks.StatusFailed || !strings.Contains(got.Error, "interrupted") {
		t.Fatalf("the task the dead holder was running: %+v, %v; want failed, interrupted", got, err)
	}
	if n := blockedCalls.Load(); n != 1 {
		t.Fatalf("the interrupted task's chat ran %d times, want 1", n)
	}
	second, si := p.holder(t, agent, first.Holder)
	if p.nodes[si] != survivor || second.Epoch <= first.Epoch {
		t.Fatalf("lease after the kill: %+v (before %+v)", second, first)
	}
}
