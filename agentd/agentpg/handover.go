package agentpg

import (
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
// lease it stops counting it at once. Steps left nil are skipped.
type Handover struct {
	Leases *lease.Manager
	State  *StateSync                                 // ASM op log replay
	Daemon interface{ Reload(context.Context) error } // *agentd.Daemon
	DMs    interface {
		TakeOver(ctx context.Context, agent string) error
	} // *dm.Service, started
	Logger *slog.Logger

	mu      sync.Mutex
	running map[string]lease.Lease
}

// Run handles the lease changes until Changes closes (lease.Manager.Run
// returned: nothing runs here any more) or ctx ends. A takeover whose
// replay fails gives the lease back, so that it is tried again (here or
// elsewhere) at a later tick.
func (h *Handover) Run(ctx context.Context) error {
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
	if !c.Held {
		h.set(agent, nil)
		h.logger().Info("agent stopped here: lease lost", "agent", agent, "epoch", c.Lease.Epoch)
		return
	}
	if err := h.start(ctx, c.Lease); err != nil {
		h.set(agent, nil)
		h.logger().Error("agent not taken over; lease given back", "agent", agent, "err", err)
		if rerr := h.Leases.Release(context.WithoutCancel(ctx), c.Lease); rerr != nil {
			h.logger().Warn("lease not given back", "agent", agent, "err", rerr)
		}
		return
	}
	h.logger().Info("agent runs here", "agent", agent, "epoch", c.Lease.Epoch)
}

// start replays what agent needs, marks it running, then catches up on its
// DMs (which asks Runs).
func (h *Handover) start(ctx context.Context, l lease.Lease) error {
	if h.Daemon != nil {
		if err := h.Daemon.Reload(ctx); err != nil {
			return err
		}
	}
	if h.State != nil {
		if _, err := h.State.Takeover(ctx, l.Agent); err != nil {
			return err
		}
	}
	h.set(l.Agent, &l)
	if h.DMs != nil {
		return h.DMs.TakeOver(ctx, l.Agent)
	}
	return nil
}

func (h *Handover) set(agent string, l *lease.Lease) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.running == nil {
		h.running = map[string]lease.Lease{}
	}
	if l == nil {
		delete(h.running, agent)
	} else {
		h.running[agent] = *l
	}
}

func (h *Handover) stopAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	clear(h.running)
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

func (h *Handover) logger() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.Default()
}
