package agentpg

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"sync"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/lease"
)

// A lease.Manager places the daemon's agents (agentd.Config.Placement).
var _ agentd.Placement = (*lease.Manager)(nil)

// Handover turns an instance's lease changes (lease.Manager.Changes) into
// starting and stopping agents: on a gained lease it reads the installed
// agents again, replays the agent's state from the op log and catches up
// on its DMs, and only then counts it as running here (Runs); on a lost
// lease it stops counting it at once, cancelling its takeover if one is
// under way. Takeovers run concurrently (Parallel at a time), so that a
// long replay delays neither other agents nor the reaction to a loss.
// Steps left nil are skipped.
type Handover struct {
	Leases *lease.Manager
	State  *StateSync                                 // ASM op log replay
	Daemon interface{ Reload(context.Context) error } // *agentd.Daemon
	DMs    interface {
		TakeOver(ctx context.Context, agent string) error
	} // *dm.Service, started
	// Parallel bounds the takeovers under way at once; 0: 4.
	Parallel int
	Logger   *slog.Logger
	// Changed, when set, is called after the set of agents running here
	// changed (Runs): an agent started or stopped. It may run under the
	// Handover's lock: it must not block nor call back (signal a channel).
	Changed func()

	mu       sync.Mutex
	running  map[string]lease.Lease
	starting map[string]*takeover
	wg       sync.WaitGroup
	sem      chan struct{}
}

// takeover is one agent's start under way.
type takeover struct {
	lease  lease.Lease
	cancel context.CancelFunc
}

// Run handles the lease changes until Changes closes (lease.Manager.Run
// returned: nothing runs here any more) or ctx ends; it cancels and waits
// for the takeovers under way before it returns. A takeover that fails
// gives the lease back, so that it is tried again (here or elsewhere) at a
// later tick.
func (h *Handover) Run(ctx context.Context) error {
	h.sem = make(chan struct{}, cmp.Or(h.Parallel, 4))
	defer h.stopAll()
	for {
		select {
		case <-ctx.Done():
			return nil
		case c, ok := <-h.Leases.Changes():
			if !ok {
				return nil
			}
			h.apply(ctx, c)
		}
	}
}

func (h *Handover) apply(ctx context.Context, c lease.Change) {
	agent := c.Lease.Agent
	h.mu.Lock()
	defer h.mu.Unlock()
	if t := h.starting[agent]; t != nil {
		t.cancel()
		delete(h.starting, agent)
	}
	_, was := h.running[agent]
	delete(h.running, agent)
	if was {
		defer h.changed()
	}
	if !c.Held {
		h.logger().Info("agent stopped here: lease lost", "agent", agent, "epoch", c.Lease.Epoch)
		return
	}
	tctx, cancel := context.WithCancel(ctx)
	t := &takeover{lease: c.Lease, cancel: cancel}
	if h.starting == nil {
		h.starting, h.running = map[string]*takeover{}, map[string]lease.Lease{}
	}
	h.starting[agent] = t
	h.wg.Go(func() {
		defer cancel()
		h.sem <- struct{}{}
		err := h.start(tctx, t)
		<-h.sem
		h.finish(tctx, t, err)
	})
}

// start replays what the agent needs, marks it running (unless its lease
// was lost meanwhile), then catches up on its DMs (which asks Runs).
func (h *Handover) start(ctx context.Context, t *takeover) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if h.Daemon != nil {
		if err := h.Daemon.Reload(ctx); err != nil {
			return err
		}
	}
	if h.State != nil {
		if _, err := h.State.Takeover(ctx, t.lease.Agent); err != nil {
			return err
		}
	}
	h.mu.Lock()
	if h.starting[t.lease.Agent] != t || ctx.Err() != nil {
		h.mu.Unlock()
		return context.Canceled
	}
	h.running[t.lease.Agent] = t.lease
	h.mu.Unlock()
	h.changed()
	if h.DMs != nil {
		return h.DMs.TakeOver(ctx, t.lease.Agent)
	}
	return nil
}

// finish clears t, and on a failure not caused by a loss gives the lease
// back.
func (h *Handover) finish(ctx context.Context, t *takeover, err error) {
	agent := t.lease.Agent
	h.mu.Lock()
	mine := h.starting[agent] == t
	if mine {
		delete(h.starting, agent)
		if _, was := h.running[agent]; err != nil && was {
			delete(h.running, agent)
			defer h.changed()
		}
	}
	h.mu.Unlock()
	switch {
	case err == nil && mine:
		h.logger().Info("agent runs here", "agent", agent, "epoch", t.lease.Epoch)
	case mine && ctx.Err() == nil:
		h.logger().Error("agent not taken over; lease given back", "agent", agent, "err", err)
		if rerr := h.Leases.Release(context.WithoutCancel(ctx), t.lease); rerr != nil {
			h.logger().Warn("lease not given back", "agent", agent, "err", rerr)
		}
	}
}

func (h *Handover) stopAll() {
	h.mu.Lock()
	for _, t := range h.starting {
		t.cancel()
	}
	h.mu.Unlock()
	h.wg.Wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	clear(h.running)
	clear(h.starting)
}

// Runs reports whether agent runs on this instance now: its lease is held
// and its state replayed. dm.Config.Agents and the ACP endpoints ask it.
func (h *Handover) Runs(agent string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.running[agent]
	return ok
}

// Lease returns the lease of agent if it runs here (held and replayed):
// give it to NewStateSync instead of lease.Manager.Holds, so that no state
// call runs for an agent whose replay is not finished.
func (h *Handover) Lease(agent string) (lease.Lease, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	l, ok := h.running[agent]
	return l, ok
}

// Running returns the agents running here, sorted (dm.Config.Agents).
func (h *Handover) Running() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, 0, len(h.running))
	for a := range h.running {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

func (h *Handover) changed() {
	if h.Changed != nil {
		h.Changed()
	}
}

func (h *Handover) logger() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.Default()
}
