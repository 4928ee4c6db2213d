package nostrrpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/nostrrpc"
	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/internal/relayclient"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/internal/testkit/testrelay"
	"github.com/agentnode/agentnode/relay"
)

// testWait bounds every wait in these tests (a hang fails, it is not timed).
const testWait = 20 * time.Second

// key is a keypair.
type key = testkit.Key

func quietLogger(t testing.TB) *slog.Logger { return testkit.Logger(t, slog.LevelWarn) }

// node is one agentnode's relay on loopback with its local agents.
type node struct {
	relay *relay.Relay
	url   string // ws://...
	keys  map[string]string
}

func startNode(t testing.TB, agents ...key) *node {
	t.Helper()
	served := testrelay.ServeCuttable(t, relay.Config{Version: "test", Logger: quietLogger(t)})
	n := &node{relay: served.Relay, url: served.URL, keys: map[string]string{}}
	for _, a := range agents {
		n.keys[a.PK] = a.SK
	}
	return n
}

// lookup is a Server's Keys.
func (n *node) lookup(_ context.Context, pk string) (string, bool) {
	sk, ok := n.keys[pk]
	return sk, ok
}

// secret is a Client's Keys.
func (n *node) secret(_ context.Context, pk string) (string, error) {
	if sk, ok := n.keys[pk]; ok {
		return sk, nil
	}
	return "", errors.New("no such agent")
}

// handler serves echo, invalid, slow; counts echo calls.
type handler struct {
	mu     sync.Mutex
	echoes int
}

func (h *handler) ServeRPC(ctx context.Context, agent, from, method string, params json.RawMessage) (any, error) {
	switch method {
	case "echo":
		h.mu.Lock()
		h.echoes++
		h.mu.Unlock()
		return map[string]any{"agent": agent, "from": from, "params": params}, nil
	case "invalid":
		return nil, capabilities.Errorf(capabilities.CodeInvalidInput, "field x is required")
	case "secret":
		return nil, errors.New("database password is hunter2")
	case "panic":
		panic("handler bug")
	case "big":
		return strings.Repeat("x", 70000), nil
	case "slow":
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return nil, fmt.Errorf("%w: %s", nostrrpc.ErrMethodNotFound, method)
}

func (h *handler) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.echoes
}

// serve runs a Server on n for the rest of the test; it returns once the
// Server listens.
func (n *node) serve(t testing.TB, h nostrrpc.Handler, workers int) *nostrrpc.Server {
	t.Helper()
	s := nostrrpc.NewServer(nostrrpc.ServerConfig{Source: n.relay, Publish: n.relay.Publish, Keys: n.lookup,
		Handler: h, Logger: quietLogger(t), Workers: workers})
	testkit.Run(t, "nostrrpc server", s.Run, s.Ready())
	return s
}

// client returns a Client for n's agents publishing to relays.
func (n *node) client(t testing.TB, relays ...string) *nostrrpc.Client {
	t.Helper()
	c := nostrrpc.NewClient(nostrrpc.ClientConfig{Relays: relays, Keys: n.secret, Logger: quietLogger(t)})
	t.Cleanup(func() { c.Close() })
	return c
}

// capture records the kind-25910 events a relay accepts.
type capture struct {
	mu   sync.Mutex
	evts []*nostr.Event
}

func captureOn(t testing.TB, n *node) *capture {
	c := &capture{}
	t.Cleanup(n.relay.OnEphemeral(func(e *nostr.Event) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.evts = append(c.evts, e)
	}))
	return c
}

// atLeast waits until c holds n events and returns them. The relay
// fires its OnEphemeral listeners in no set order and the server is one
// of them, so a reply can be captured before its request, and the
// request's capture may still be under way when the reply reached its
// caller.
func (c *capture) atLeast(t testing.TB, n int) []*nostr.Event {
	t.Helper()
	testkit.WaitFor(t, 30*time.Second, fmt.Sprintf("%d kind-25910 events captured", n), func() bool { return len(c.all()) >= n })
	return c.all()
}

// byAuthor is the one event of evts by pubkey, or nil.
func byAuthor(evts []*nostr.Event, pubkey string) *nostr.Event {
	for _, e := range evts {
		if e.PubKey == pubkey {
			return e
		}
	}
	return nil
}

func (c *capture) all() []*nostr.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*nostr.Event(nil), c.evts...)
}

// listener is a websocket subscription as some key, collecting events.
type listener struct {
	w      *relayclient.Relay
	mu     sync.Mutex
	evts   []*nostr.Event
	cancel context.CancelFunc
	done   chan error
}

// listen subscribes to f on url as k and returns once the subscription is live.
func listen(t *testing.T, url string, k key, f nostr.Filter) *listener {
	t.Helper()
	w := relayclient.New(url, k.SK, quietLogger(t))
	t.Cleanup(func() { w.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	l := &listener{w: w, cancel: cancel, done: make(chan error, 1)}
	live := make(chan struct{})
	go func() {
		l.done <- w.Subscribe(ctx, nostr.Filters{f}, func(e *nostr.Event) {
			l.mu.Lock()
			l.evts = append(l.evts, e)
			l.mu.Unlock()
		}, func() { close(live) })
	}()
	t.Cleanup(func() { cancel(); <-l.done })
	select {
	case <-live:
	case err := <-l.done:
		t.Fatalf("subscribe as %s: %v", k.PK[:8], err)
	case <-time.After(testWait):
		t.Fatal("subscription never became live")
	}
	return l
}

func (l *listener) got() []*nostr.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*nostr.Event(nil), l.evts...)
}

// waitFor polls cond until it holds or testWait passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testkit.WaitFor(t, testWait, what, cond)
}

func callCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	t.Cleanup(cancel)
	return ctx
}

// wantCode fails unless err is a *capabilities.Error with code.
func wantCode(t *testing.T, err error, code string) *capabilities.Error {
	t.Helper()
	var ce *capabilities.Error
	if !errors.As(err, &ce) {
		t.Fatalf("error = %v (%T), want a *capabilities.Error %s", err, err, code)
	}
	if ce.Code != code {
		t.Fatalf("code = %s (%s), want %s", ce.Code, ce.Message, code)
	}
	return ce
}
