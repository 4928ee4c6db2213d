package lease_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/lease"
	"github.com/agentnode/agentnode/internal/pgtest"
)

func openBalanced(t *testing.T, url, name string) *lease.Manager {
	t.Helper()
	m, err := lease.Open(context.Background(), url, lease.Config{Instance: name, TTL: time.Minute, Balance: true, URL: "http://" + name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// TestManager_balance: the first instance takes every agent; once a second
// one is live, the first hands back the excess and the second takes it.
func TestManager_balance(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	a := openBalanced(t, url, "a")
	addAgents(t, a, 9)
	a.Tick(ctx)
	if n := len(a.Held()); n != 9 {
		t.Fatalf("a alone holds %d, want 9", n)
	}
	b := openBalanced(t, url, "b")
	b.Tick(ctx) // b is live now; nothing is free yet
	if n := len(b.Held()); n != 0 {
		t.Fatalf("b holds %d before a hands back, want 0", n)
	}
	a.Tick(ctx) // share ceil(9/2) = 5: 4 handed back
	b.Tick(ctx)
	if na, nb := len(a.Held()), len(b.Held()); na != 5 || nb != 4 {
		t.Fatalf("a holds %d, b %d; want 5 and 4", na, nb)
	}
	lost := 0
	for len(a.Changes()) > 0 {
		if c := <-a.Changes(); !c.Held {
			lost++
		}
	}
	if lost != 4 {
		t.Errorf("a reported %d leases lost, want 4", lost)
	}
	l := b.Held()[0]
	if got, err := a.Get(ctx, l.Agent); err != nil || got.Holder != "b" || got.URL != "http://b" {
		t.Errorf("lease of %s: %+v, %v; want held by b at http://b", l.Agent, got, err)
	}
	if inst, err := a.Instances(ctx); err != nil || inst["a"] != "http://a" || inst["b"] != "http://b" {
		t.Errorf("Instances = %v, %v", inst, err)
	}
}

// TestManager_balanceTakeover: balanced instances split the agents; when
// one dies, the other's share grows to all of them and it takes them over.
func TestManager_balanceTakeover(t *testing.T) {
	url := pgtest.URL(t)
	cfg := func(name string) lease.Config {
		return lease.Config{Instance: name, TTL: 400 * time.Millisecond, Interval: 100 * time.Millisecond, Balance: true}
	}
	a, err := lease.Open(context.Background(), url, cfg("a"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := lease.Open(context.Background(), url, cfg("b"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	addAgents(t, a, 6)
	ctxA, killA := context.WithCancel(context.Background())
	ctxB, stopB := context.WithCancel(context.Background())
	defer stopB()
	doneA := make(chan struct{})
	go func() { a.Run(ctxA); close(doneA) }()
	go b.Run(ctxB)
	waitHeld(t, b.Changes(), 3) // balanced: b gets its half
	killA()
	<-doneA
	waitHeld(t, b.Changes(), 3) // and, once a is gone, the other half
	if n := len(b.Held()); n != 6 {
		t.Fatalf("b holds %d after a died, want 6", n)
	}
}
