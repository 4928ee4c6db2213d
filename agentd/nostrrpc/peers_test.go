package nostrrpc_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentnode/agentnode/agentd/nostrrpc"
	"github.com/agentnode/agentnode/internal/testkit"
)

// A caller that publishes only to its own relay A reaches bob on node B,
// whose server listens on A as a peer (B peers A, A does not peer B); the
// reply comes back on A. A request published to both relays is served
// once (the two sources share one replay memory).
func TestPeerListener_AnswersOnThePeerRelay(t *testing.T) {
	alice, bob := testkit.NewKey(t), testkit.NewKey(t)
	a, b := startNode(t, alice), startNode(t, bob)
	h := &handler{}
	srv := b.serve(t, h, 4)
	pl := nostrrpc.NewPeerListener(nostrrpc.PeerListenerConfig{Relays: []string{a.url}, Agents: func() []string { return []string{bob.PK} },
		Keys: b.lookup, Server: srv, Logger: quietLogger(t)})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- pl.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		if n := pl.Live(); n != 0 {
			t.Errorf("%d subscriptions live after Run returned", n)
		}
	})
	waitFor(t, "B's subscription on A", func() bool { return pl.Live() == 1 })

	onlyA := a.client(t, a.url)
	out, err := onlyA.CallAgent(callCtx(t), alice.PK, bob.PK, "echo", json.RawMessage(`{"text":"via A"}`))
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Agent, From string }
	if err := json.Unmarshal(out, &got); err != nil || got.Agent != bob.PK || got.From != alice.PK {
		t.Fatalf("result %s: %v", out, err)
	}

	both := a.client(t, a.url, b.url)
	if _, err := both.CallAgent(callCtx(t), alice.PK, bob.PK, "echo", json.RawMessage(`{"text":"via both"}`)); err != nil {
		t.Fatal(err)
	}
	if n := h.count(); n != 2 {
		t.Fatalf("handler ran %d times for two calls, want 2 (one published to two relays is served once)", n)
	}
}

// The listener follows the local agents: an agent removed loses its
// subscriptions once Changed is called, an agent added gets them.
func TestPeerListener_FollowsAgents(t *testing.T) {
	bob, carol := testkit.NewKey(t), testkit.NewKey(t)
	a, b := startNode(t), startNode(t, bob, carol)
	srv := b.serve(t, &handler{}, 1)
	var mu sync.Mutex
	agents := []string{bob.PK}
	pl := nostrrpc.NewPeerListener(nostrrpc.PeerListenerConfig{Relays: []string{a.url}, Keys: b.lookup, Server: srv, Logger: quietLogger(t),
		Agents: func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(agents) }})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- pl.Run(ctx) }()
	defer func() { cancel(); <-done }()
	set := func(pks ...string) {
		mu.Lock()
		agents = pks
		mu.Unlock()
		pl.Changed()
	}
	waitFor(t, "bob's subscription", func() bool { return pl.Live() == 1 })
	set(bob.PK, carol.PK)
	waitFor(t, "bob's and carol's", func() bool { return pl.Live() == 2 })
	set()
	waitFor(t, "none", func() bool { return pl.Live() == 0 })
}

// A peer relay that goes away and comes back on the same address: the
// listener's subscription drops, it retries on the backoff schedule while
// the relay refuses, and it subscribes again once the relay is back, so a
// caller that publishes only there reaches bob again.
func TestPeerListener_ResubscribesWhenThePeerComesBack(t *testing.T) {
	alice, bob := testkit.NewKey(t), testkit.NewKey(t)
	a, b := startNode(t, alice), startNode(t, bob)
	srv := b.serve(t, &handler{}, 4)
	outage := testkit.NewOutage(t, strings.TrimPrefix(a.url, "ws://"))
	pl := nostrrpc.NewPeerListener(nostrrpc.PeerListenerConfig{Relays: []string{"ws://" + outage.Addr()},
		Agents: func() []string { return []string{bob.PK} }, Keys: b.lookup, Server: srv, Logger: quietLogger(t)})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- pl.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitFor(t, "B's subscription on A", func() bool { return pl.Live() == 1 })

	for round := range 2 {
		outage.Down()
		refused := outage.Refused()
		waitFor(t, "the subscription to drop", func() bool { return pl.Live() == 0 })
		waitFor(t, "two retries refused", func() bool { return outage.Refused() >= refused+2 })
		outage.Up()
		waitFor(t, "the subscription back", func() bool { return pl.Live() == 1 })
		out, err := a.client(t, a.url).CallAgent(callCtx(t), alice.PK, bob.PK, "echo", json.RawMessage(`{"text":"back"}`))
		if err != nil {
			t.Fatalf("round %d: call after the peer came back: %v", round, err)
		}
		if !strings.Contains(string(out), bob.PK) {
			t.Fatalf("round %d: result %s", round, out)
		}
	}
}
