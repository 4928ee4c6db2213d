package agentpg_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/agentpg"
	"github.com/agentnode/agentnode/agentd/lease"
	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/internal/pgtest"
)

// dmRecorder records TakeOver calls and whether the agent ran by then.
type dmRecorder struct {
	h     *agentpg.Handover
	mu    sync.Mutex
	calls []string
}

func (d *dmRecorder) TakeOver(_ context.Context, agent string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls = append(d.calls, fmt.Sprintf("%s running=%v", agent, d.h.Runs(agent)))
	return nil
}

func (d *dmRecorder) got() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.calls)
}

// run starts in's lease loop and handover; kill stops both without
// releasing anything (the instance dies).
func (in *instance) run(t *testing.T) (h *agentpg.Handover, rec *dmRecorder, kill func()) {
	ctx, cancel := context.WithCancel(context.Background())
	h = &agentpg.Handover{Leases: in.lm, State: in.sync}
	rec = &dmRecorder{h: h}
	h.DMs = rec
	var wg sync.WaitGroup
	wg.Go(func() { in.lm.Run(ctx) })
	wg.Go(func() { h.Run(ctx) })
	kill = func() { cancel(); wg.Wait() }
	t.Cleanup(kill)
	return h, rec, kill
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond) // polling interval, not synchronisation
	}
}

// TestHandover_takeoverAfterDeath: the agent runs on a; a dies; b takes
// the lease, replays the state, then catches up on DMs, and the state a
// acknowledged is intact on b.
func TestHandover_takeoverAfterDeath(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	// Long leases and quick ticks: a busy CPU cannot make a lose the
	// agent before it dies; its death expires its lease at once.
	a := newInstanceWith(t, url, lease.Config{Instance: "a", TTL: time.Minute, Interval: 20 * time.Millisecond})
	b := newInstanceWith(t, url, lease.Config{Instance: "b", TTL: time.Minute, Interval: 20 * time.Millisecond})
	if _, err := a.state.Register(ctx, capNote, []byte(noteSchema)); err != nil {
		t.Fatal(err)
	}
	a.lm.Add(ctx, agentX)
	ha, _, killA := a.run(t)
	waitUntil(t, "the agent to run on a", func() bool { return ha.Runs(agentX) })
	if _, err := a.call(t, state.ToolCreate, createArgs("n1", "before the crash")); err != nil {
		t.Fatal(err)
	}

	hb, recB, _ := b.run(t)
	if hb.Runs(agentX) {
		t.Fatal("the agent runs on b while a holds it")
	}
	killA()
	expireLeases(t, url, "a")
	waitUntil(t, "the agent to run on b", func() bool { return hb.Runs(agentX) })
	if got, err := b.get(t, "n1"); err != nil || got["title"] != "before the crash" {
		t.Errorf("state on b after the takeover: %v, %v", got, err)
	}
	waitUntil(t, "b's DM catch-up", func() bool { return len(recB.got()) == 1 })
	if got := recB.got(); got[0] != agentX+" running=true" {
		t.Errorf("DM takeover = %q, want it after the agent runs", got)
	}
	if _, err := b.call(t, state.ToolUpdate, fmt.Sprintf(`{"schema_uri":%q,"id":"n1","patch":[{"op":"replace","path":"/title","value":"after"}]}`, noteURI)); err != nil {
		t.Errorf("b writes the agent's state: %v", err)
	}
}

// blockingDMs blocks TakeOver of "slow" until its context ends.
type blockingDMs struct {
	entered   chan struct{}
	cancelled chan struct{}
}

func (b *blockingDMs) TakeOver(ctx context.Context, agent string) error {
	if agent != "slow" {
		return nil
	}
	close(b.entered)
	<-ctx.Done()
	close(b.cancelled)
	return ctx.Err()
}

// TestHandover_lossDuringTakeover: a takeover under way does not hold up
// another agent's, and losing the lease cancels it at once.
func TestHandover_lossDuringTakeover(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url := pgtest.URL(t)
	m, err := lease.Open(ctx, url, lease.Config{Instance: "a", TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	dms := &blockingDMs{entered: make(chan struct{}), cancelled: make(chan struct{})}
	h := &agentpg.Handover{Leases: m, DMs: dms}
	done := make(chan struct{})
	go func() { h.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	m.Add(ctx, "slow")
	if err := m.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	<-dms.entered
	m.Add(ctx, "fast")
	if err := m.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "fast to run while slow's takeover is blocked", func() bool { return h.Runs("fast") })

	m.Remove(ctx, "slow")
	if err := m.Tick(ctx); err != nil { // reports slow lost
		t.Fatal(err)
	}
	<-dms.cancelled
	waitUntil(t, "slow to stop", func() bool { return !h.Runs("slow") })
	if got := h.Running(); len(got) != 1 || got[0] != "fast" {
		t.Errorf("Running = %v, want [fast]", got)
	}
}
