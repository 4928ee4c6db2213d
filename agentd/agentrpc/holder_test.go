package agentrpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fasthttp/websocket"

	"github.com/agentnode/agentnode/agentd/agentpg"
	"github.com/agentnode/agentnode/agentd/agentrpc"
	"github.com/agentnode/agentnode/agentd/tasks"
	"github.com/agentnode/agentnode/internal/pgtest"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/jsonrpc"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// sharedInstance is one instance of several on one task store in
// PostgreSQL (serve --postgres): its own service, messenger and set of
// agents it runs, and the database's task notifications wired as serve
// wires them (Wake, then Pickup).
type sharedInstance struct {
	svc   *agentrpc.Service
	tasks *tasks.Store
	echo  *echo
	runs  atomic.Bool // whether bob runs here
	url   string
}

func startShared(t *testing.T, f *fixture, url string) *sharedInstance {
	t.Helper()
	ctx := context.Background()
	db, err := agentpg.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	st, err := tasks.Open(ctx, tasks.Config{Backend: db.Tasks(), Poll: 50 * time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	in := &sharedInstance{tasks: st, echo: newEcho(alice, bob)}
	in.svc = agentrpc.New(agentrpc.Config{Token: testToken, Directory: f.dir, Tasks: st, Messenger: in.echo,
		Local: localSet(alice, bob), Runs: func(agent string) bool { return agent == bob.pk && in.runs.Load() }, Logger: quiet})
	testkit.Run(t, "acp", in.svc.Run, in.svc.Ready())
	changed := make(chan struct{}, 1)
	testkit.Run(t, "listen", func(ctx context.Context) error {
		return db.Listen(ctx, func(topic string) {
			if topic == agentpg.TopicTasks || topic == agentpg.TopicAll {
				select {
				case changed <- struct{}{}:
				default:
				}
			}
		})
	}, nil)
	testkit.Run(t, "pickup", func(ctx context.Context) error {
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-changed:
			}
			st.Wake()
			if err := in.svc.Pickup(ctx); err != nil && ctx.Err() == nil {
				t.Errorf("pickup: %v", err)
			}
		}
	}, nil)
	srv := httptest.NewServer(withToken(in.svc))
	t.Cleanup(srv.Close)
	in.url = srv.URL
	return in
}

// TestShared_TasksRunOnTheHolder: two instances on one task store; bob
// runs on a. A task delegated to bob through b is left to a, which picks
// it up (the database's notification) and executes it; b's caller waits
// for the outcome (wait: true). With bob running nowhere a task stays
// assigned; the instance that takes bob over resumes it (Pickup, as serve
// calls it when an agent starts running there), and fails a task left
// running by the instance that lost bob.
func TestShared_TasksRunOnTheHolder(t *testing.T) {
	f := newFixture(t)
	url := pgtest.URL(t)
	a, b := startShared(t, f, url), startShared(t, f, url)
	a.runs.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()

	for i, wait := range []bool{false, true} {
		var res agentrpc.DelegateResult
		mustCall(t, b.url, "agent/delegate", map[string]any{"target": bob.pk, "wait": wait,
			"task": map[string]any{"payload": map[string]any{"text": "job"}}}, &res)
		got, err := b.tasks.Wait(ctx, res.Task.ID)
		if err != nil || got.Status != tasks.StatusDone || !strings.Contains(string(got.Result), "bob heard: job") {
			t.Fatalf("task %d delegated through b: %+v, %v; want done by bob", i, got, err)
		}
		if wait && res.Task.Status != tasks.StatusDone {
			t.Fatalf("wait: true through b answered %s, want done", res.Task.Status)
		}
		if a.echo.count() != i+1 || b.echo.count() != 0 {
			t.Fatalf("messages executed: a %d, b %d; want a %d, b 0", a.echo.count(), b.echo.count(), i+1)
		}
	}

	// bob runs nowhere (a lost it): a task delegated now waits, assigned.
	a.runs.Store(false)
	var res agentrpc.DelegateResult
	mustCall(t, a.url, "agent/delegate", map[string]any{"target": bob.pk, "task": map[string]any{"payload": map[string]any{"text": "later"}}}, &res)
	if got, err := a.tasks.Get(ctx, res.Task.ID); err != nil || got.Status != tasks.StatusAssigned {
		t.Fatalf("task while bob runs nowhere: %+v, %v; want assigned", got, err)
	}
	// A task a left running when it lost bob (no runner anywhere now).
	orphan, err := a.tasks.Create(ctx, tasks.Task{Assignee: bob.pk, Payload: []byte(`{"text":"cut short"}`)})
	if err == nil {
		_, err = a.tasks.Transition(ctx, orphan.ID, tasks.StatusAssigned, nil)
	}
	if err == nil {
		_, err = a.tasks.Transition(ctx, orphan.ID, tasks.StatusRunning, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	// b takes bob over.
	b.runs.Store(true)
	if err := b.svc.Pickup(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := a.tasks.Wait(ctx, res.Task.ID)
	if err != nil || got.Status != tasks.StatusDone || !strings.Contains(string(got.Result), "bob heard: later") {
		t.Fatalf("the waiting task after the takeover: %+v, %v; want done", got, err)
	}
	if b.echo.count() != 1 || a.echo.count() != 2 {
		t.Fatalf("messages executed: a %d, b %d; want a 2, b 1", a.echo.count(), b.echo.count())
	}
	got, err = a.tasks.Wait(ctx, orphan.ID)
	if err != nil || got.Status != tasks.StatusFailed || !strings.Contains(got.Error, "interrupted") {
		t.Fatalf("the task left running: %+v, %v; want failed, interrupted", got, err)
	}
}

// TestForward_PerCallInBatches: Config.Forward is asked about each call
// naming an agent, in a batch too (over HTTP and over a websocket): the
// calls it handles are answered with its result or error, the others are
// served here, and the batch's answers keep their order.
func TestForward_PerCallInBatches(t *testing.T) {
	f := newFixture(t)
	var asked atomic.Int32
	svc := agentrpc.New(agentrpc.Config{Token: testToken, Directory: f.dir, Tasks: f.tasks, Messenger: f.echo,
		Local: localSet(alice, bob), Logger: quiet,
		Forward: func(_ context.Context, method string, params json.RawMessage, target string) (json.RawMessage, bool, error) {
			asked.Add(1)
			switch target {
			case bob.pk:
				return json.RawMessage(`{"servedBy":"bob's instance","method":"` + method + `"}`), true, nil
			case carol.pk:
				return nil, true, &jsonrpc.Error{Code: agentrpc.CodeAgentUnavailable, Message: "carol's instance does not answer"}
			}
			return nil, false, nil
		}})
	testkit.Run(t, "acp", svc.Run, svc.Ready())
	srv := httptest.NewServer(withToken(svc))
	defer srv.Close()
	msg := func(target, text string) map[string]any {
		return map[string]any{"target": target, "content": map[string]any{"type": "request",
			"payload": map[string]any{"messages": []map[string]any{{"text": text}}}}}
	}
	batch, _ := json.Marshal([]map[string]any{
		{"jsonrpc": "2.0", "id": 1, "method": "agent/message", "params": msg(bob.pk, "to bob")},
		{"jsonrpc": "2.0", "id": 2, "method": "agent/message", "params": msg(alice.pk, "to alice")},
		{"jsonrpc": "2.0", "id": 3, "method": "ping"},
		{"jsonrpc": "2.0", "id": 4, "method": "agent/message", "params": msg(carol.pk, "to carol")},
		{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": map[string]any{"name": "agent_delegate", "arguments": map[string]any{"target": bob.pk}}},
	})
	check := func(how string, raw []byte) {
		t.Helper()
		var out []struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *rpcError       `json:"error"`
		}
		if err := json.Unmarshal(raw, &out); err != nil || len(out) != 5 {
			t.Fatalf("%s: %s (%v)", how, raw, err)
		}
		for i, r := range out {
			if r.ID != i+1 {
				t.Fatalf("%s: answer %d has id %d", how, i, r.ID)
			}
		}
		if !strings.Contains(string(out[0].Result), `"servedBy":"bob's instance","method":"agent/message"`) ||
			!strings.Contains(string(out[1].Result), "alice heard: to alice") || out[2].Error != nil ||
			out[3].Error == nil || out[3].Error.Code != agentrpc.CodeAgentUnavailable ||
			!strings.Contains(string(out[4].Result), `"method":"tools/call"`) {
			t.Fatalf("%s: %s", how, raw)
		}
	}
	resp, err := http.Post(srv.URL, "application/json", bytes.NewReader(batch))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	check("HTTP", raw)
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.WriteMessage(websocket.TextMessage, batch); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(testWait))
	_, raw, err = conn.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	check("websocket", raw)
	if n := asked.Load(); n != 8 { // the four calls naming an agent, twice
		t.Fatalf("Forward asked %d times, want 8", n)
	}
}
