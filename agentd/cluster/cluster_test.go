package cluster_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/agentpg"
	"github.com/agentnode/agentnode/agentd/agentrpc"
	"github.com/agentnode/agentnode/agentd/cluster"
	"github.com/agentnode/agentnode/internal/lifecycle"
	"github.com/agentnode/agentnode/internal/pgtest"
	"github.com/agentnode/agentnode/jsonrpc"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// wait bounds every wait of these tests (a busy machine is slow).
const wait = 45 * time.Second

// testTTL is the leases' TTL: short, so the holder takes the agent soon.
const testTTL = 2 * time.Second

// instance is one in-process instance of a cluster: its Cluster over the
// shared database and its /acp endpoint on a real HTTP server, answered
// by a JSON-RPC server that forwards like agentrpc does (ConfigureACP).
type instance struct {
	name  string
	c     *cluster.Shared
	srv   *httptest.Server
	calls atomic.Int32 // agent/message calls answered here
}

// recordAgents are the installed agents as the shared database records
// them (agentd/agentpg), the view of them an instance's daemon keeps.
type recordAgents struct{ r *agentpg.Agents }

func (a recordAgents) Lookup(ref string) (agentd.Agent, error) {
	return a.r.Get(context.Background(), ref)
}

func (a recordAgents) List() []agentd.Agent {
	list, _ := a.r.List(context.Background())
	return list
}

func (recordAgents) Reload(context.Context) error { return nil }

// newInstance opens an instance named name on the database at url.
func newInstance(t testing.TB, url, name string, agents cluster.Agents, now func() time.Time) *instance {
	t.Helper()
	in := &instance{name: name}
	mux := http.NewServeMux()
	in.srv = httptest.NewServer(mux)
	t.Cleanup(in.srv.Close)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	c, err := cluster.Open(context.Background(), cluster.Config{URL: url, DataDir: t.TempDir(), LeaseTTL: testTTL,
		AdvertiseURL: in.srv.URL, CallTimeout: wait, Logger: logger, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	in.c = c
	var acp agentrpc.Config
	acp.Local = func(string) bool { return true }
	c.ConfigureACP(&acp)
	rpc := jsonrpc.NewServer(jsonrpc.Options{Logger: logger})
	rpc.Register("agent/message", in.answer(acp.Forward))
	mux.Handle(cluster.PathACP, c.Forward(rpc, cluster.ACPTarget(1<<20)))
	if err := c.Join(context.Background(), cluster.Local{Agents: agents}); err != nil {
		t.Fatal(err)
	}
	return in
}

// answer is agent/message here: forwarded first when Forward says so
// (as agentrpc does), else answered "<instance>: <text>".
func (in *instance) answer(forward func(context.Context, string, json.RawMessage, string) (json.RawMessage, bool, error)) jsonrpc.Handler {
	return func(ctx context.Context, params json.RawMessage) (any, error) {
		var p agentrpc.MessageParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		if res, handled, err := forward(ctx, "agent/message", params, p.Target); handled {
			return res, err
		}
		in.calls.Add(1)
		p.Content.Payload.Messages[0].Text = in.name + ": " + p.Content.Payload.Messages[0].Text
		return agentrpc.MessageResult(p), nil
	}
}

// run runs the instance's cluster parts (leases, handover) until the test ends.
func (in *instance) run(t testing.TB) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = lifecycle.Run(ctx, in.c.Parts()...)
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// client calls in's /acp with the shared API token.
func (in *instance) client(t testing.TB, token string) *jsonrpc.HTTPClient {
	t.Helper()
	h := http.Header{}
	h.Set("Authorization", "Bearer "+token)
	return &jsonrpc.HTTPClient{URL: in.srv.URL + cluster.PathACP, Header: h}
}

// pair is two instances on one database and one agent, which b runs.
type pair struct {
	a, b   *instance
	agent  string
	token  string
	url    string
	agents cluster.Agents
}

// newPair installs an agent in a fresh database, opens instances a and b
// on it, runs b's leases until b runs the agent; a runs nothing (its
// parts do not run), so every call for the agent through a goes to b.
func newPair(t *testing.T) *pair {
	t.Helper()
	return newPairTB(t)
}

// newPairTB is newPair for tests and benchmarks.
func newPairTB(t testing.TB) *pair {
	t.Helper()
	url := pgtest.URL(t)
	ctx := context.Background()
	db, err := agentpg.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	agent, _ := nostr.GetPublicKey(nostr.GeneratePrivateKey())
	owner, _ := nostr.GetPublicKey(nostr.GeneratePrivateKey())
	rec := agentd.Agent{PubKey: agent, Name: "forwarded", Owner: owner,
		DefinitionID: strings.Repeat("d", 64)}
	if err := db.Agents().Put(ctx, rec); err != nil {
		t.Fatal(err)
	}
	token, err := db.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	agents := recordAgents{db.Agents()}
	p := &pair{a: newInstance(t, url, "a", agents, nil), b: newInstance(t, url, "b", agents, nil),
		agent: agent, token: token, url: url, agents: agents}
	p.b.run(t)
	timeout := time.NewTimer(wait)
	defer timeout.Stop()
	for !p.b.c.Runs(agent) {
		select {
		case <-p.b.c.Changed(): // the agents running on b changed
		case <-timeout.C:
			t.Fatalf("instance b does not run the agent after %s", wait)
		}
	}
	return p
}

// message is an agent/message to agent saying text in conversation.
func message(agent, conversation, text string) agentrpc.MessageParams {
	return agentrpc.MessageParams{Target: agent, Content: agentrpc.MessageContent{Type: "request",
		Payload: agentrpc.MessagePayload{Messages: []agentrpc.TextMessage{{Text: text}},
			Context: map[string]any{"sessionId": conversation}}}}
}

// reply is the first text of an agent/message result.
func reply(t *testing.T, res agentrpc.MessageResult) string {
	t.Helper()
	if len(res.Content.Payload.Messages) == 0 {
		t.Fatalf("no message in the answer: %+v", res)
	}
	return res.Content.Payload.Messages[0].Text
}

func TestForward_callToTheHolder(t *testing.T) {
	p := newPair(t)
	ctx := context.Background()
	var res agentrpc.MessageResult
	if err := p.a.client(t, p.token).Call(ctx, "agent/message", message(p.agent, "s1", "hello"), &res); err != nil {
		t.Fatal(err)
	}
	if got := reply(t, res); got != "b: hello" {
		t.Fatalf("a single HTTP call through a answered %q; want b's answer", got)
	}
	// A call inside a batch or on a websocket is forwarded on its own
	// (agentrpc's Forward): a batch is not forwarded whole.
	batch := `[{"jsonrpc":"2.0","id":1,"method":"agent/message","params":` + mustJSON(t, message(p.agent, "s1", "again")) + `}]`
	req, _ := http.NewRequest(http.MethodPost, p.a.srv.URL+cluster.PathACP, strings.NewReader(batch))
	req.Header.Set("Authorization", "Bearer "+p.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []jsonrpc.Response
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || len(out) != 1 || out[0].Error != nil {
		t.Fatalf("batch through a: %v %+v", err, out)
	}
	if err := json.Unmarshal(out[0].Result, &res); err != nil || reply(t, res) != "b: again" {
		t.Fatalf("batch entry through a answered %s; want b's answer", out[0].Result)
	}
	if n := p.a.calls.Load(); n != 0 {
		t.Fatalf("a answered %d calls itself; want every one forwarded to b", n)
	}
}

func TestForward_holderGone(t *testing.T) {
	p := newPair(t)
	p.b.srv.Close() // b still renews its lease, but answers no HTTP any more
	ctx := context.Background()
	err := p.a.client(t, p.token).Call(ctx, "agent/message", message(p.agent, "s1", "hello"), nil)
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != agentrpc.CodeAgentUnavailable {
		t.Fatalf("call for an agent whose holder is gone: %v; want AgentUnavailable (%d)", err, agentrpc.CodeAgentUnavailable)
	}
	if !strings.Contains(rpcErr.Message, "does not answer") || !strings.Contains(rpcErr.Message, p.b.c.Instance()) {
		t.Fatalf("error %q does not name the silent holder %s", rpcErr.Message, p.b.c.Instance())
	}
	// Over plain HTTP: 503, Retry-After one lease TTL, the JSON-RPC error.
	req, _ := http.NewRequest(http.MethodPost, p.a.srv.URL+cluster.PathACP,
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"agent/message","params":`+mustJSON(t, message(p.agent, "s1", "hi"))+`}`))
	req.Header.Set("Authorization", "Bearer "+p.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out jsonrpc.Response
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "2" || out.Error == nil || out.Error.Code != agentrpc.CodeAgentUnavailable {
		t.Fatalf("HTTP call for an agent whose holder is gone: %d, Retry-After %q, %+v; want 503, 2, AgentUnavailable",
			resp.StatusCode, resp.Header.Get("Retry-After"), out.Error)
	}
	if _, err := p.a.c.Chat(ctx, p.agent, "s1", "hello"); !errors.Is(err, cluster.ErrUnavailable) {
		t.Fatalf("chat for an agent whose holder is gone: %v; want ErrUnavailable", err)
	}
}

func TestForward_expiredLeaseIsNoHolder(t *testing.T) {
	p := newPair(t)
	// An instance whose clock is past the lease's expiry sees nobody hold it.
	late := func() time.Time { return time.Now().Add(time.Hour) }
	l := newInstance(t, p.url, "late", p.agents, late)
	err := l.client(t, p.token).Call(context.Background(), "agent/message", message(p.agent, "s1", "hello"), nil)
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != agentrpc.CodeAgentUnavailable {
		t.Fatalf("call while the lease looks expired: %v; want AgentUnavailable", err)
	}
	if n := p.b.calls.Load(); n != 0 {
		t.Fatalf("b answered %d calls under a lease that looked expired; want none", n)
	}
}

func TestForward_forwardedCallServedWhereItArrives(t *testing.T) {
	p := newPair(t)
	// A call that another instance forwarded (HeaderForwarded) is answered
	// by a even though b runs the agent: never forwarded twice, so two
	// instances that disagree about the holder cannot bounce it forever.
	c := p.a.client(t, p.token)
	c.Header.Set(cluster.HeaderForwarded, "some-instance")
	var res agentrpc.MessageResult
	if err := c.Call(context.Background(), "agent/message", message(p.agent, "s1", "hello"), &res); err != nil {
		t.Fatal(err)
	}
	if got := reply(t, res); got != "a: hello" {
		t.Fatalf("a forwarded call was answered %q; want a's own answer", got)
	}
	if n := p.b.calls.Load(); n != 0 {
		t.Fatalf("b answered %d calls; want none", n)
	}
}

func TestChat_forwardedToTheHolder(t *testing.T) {
	p := newPair(t)
	got, err := p.a.c.Chat(context.Background(), p.agent, "conversation-1", "how are you?")
	if err != nil {
		t.Fatal(err)
	}
	if got != "b: how are you?" {
		t.Fatalf("chat through a answered %q; want b's answer", got)
	}
	if n := p.b.calls.Load(); n != 1 {
		t.Fatalf("b answered %d calls; want the chat", n)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
