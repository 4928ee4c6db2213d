package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/agentd/state/replicate"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/relay"
)

// Timings of the state replication wiring.
const (
	// stateRecheck is how often the installed agents are compared with the
	// running replicators even without an OnInterestsChange signal.
	stateRecheck = 5 * time.Second
	// directoryTTL is how long an owner's verified agents are cached: the
	// directory is consulted for every batch sent and event received.
	directoryTTL = time.Second
)

// serveState is the Agent State Model of `agentnode serve`: the runtime on
// <data>/state.db (the store `agentnode state` opens too; SQLite in WAL
// mode with a busy timeout and BEGIN IMMEDIATE, so both processes may
// write, and the replicators poll the op log for the CLI's commits) and
// one replicate.Replicator per installed agent, pushing and pulling op
// events on the local relay (in-process) and on every --peer relay
// (websocket, NIP-42 AUTH with the agent's key). docs/ASM.md §9.
type serveState struct {
	c   *ServeCommand
	rt  *state.Runtime
	log *slog.Logger
	dir *claimsDirectory

	unhook func() // of the directory's OnStored hook

	wake   chan struct{}
	cancel context.CancelFunc // of the reconcile loop; nil before startState
	done   chan struct{}      // closed when the loop and every replicator stopped

	mu      sync.Mutex
	running map[string]*agentReplicator // by agent pubkey
}

// agentReplicator is one running replicator and what it owns.
type agentReplicator struct {
	owner  string
	rep    *replicate.Replicator
	ws     []*replicate.WSRelay
	cancel context.CancelFunc
	done   chan struct{}
}

// openState opens the state runtime in the data directory. Nothing runs
// until startState.
func (c *ServeCommand) openState(ctx context.Context, logger *slog.Logger) error {
	rt, err := state.Open(ctx, state.Options{Dir: c.Config.DataDir, Logger: logger})
	if err != nil {
		return fmt.Errorf("serve: open state in %s: %w", c.Config.DataDir, err)
	}
	c.asm = &serveState{c: c, rt: rt, log: logger.With("component", "state"),
		dir:  &claimsDirectory{q: c.relay, cache: map[string]dirEntry{}},
		wake: make(chan struct{}, 1), running: map[string]*agentReplicator{}}
	c.asm.unhook = c.relay.OnStored(c.asm.dir.notify)
	return nil
}

// State is the Agent State Model runtime (after Open).
func (c *ServeCommand) State() *state.Runtime {
	if c.asm == nil {
		return nil
	}
	return c.asm.rt
}

// startState starts the loop that runs a replicator for every installed
// agent; it stops in closeState.
func (c *ServeCommand) startState() {
	s := c.asm
	if s == nil || s.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan struct{})
	go s.loop(ctx)
}

// refreshState asks the loop to compare agents and replicators now (the
// daemon's OnInterestsChange: an agent installed or removed).
func (c *ServeCommand) refreshState() {
	if c.asm == nil {
		return
	}
	select {
	case c.asm.wake <- struct{}{}:
	default:
	}
}

// closeState stops every replicator (waiting until ctx ends) and closes
// the runtime.
func (c *ServeCommand) closeState(ctx context.Context) error {
	s := c.asm
	if s == nil {
		return nil
	}
	s.unhook()
	if s.cancel != nil {
		s.cancel()
		select {
		case <-s.done:
		case <-ctx.Done():
			s.log.Warn("state replication did not stop in time")
		}
	}
	return s.rt.Close(ctx)
}

func (s *serveState) loop(ctx context.Context) {
	defer close(s.done)
	defer s.stopAll()
	defer s.startLifecycle(ctx).Wait() // ctx has ended when the loop returns
	t := time.NewTicker(stateRecheck)
	defer t.Stop()
	for {
		s.reconcile(ctx)
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-t.C:
		}
	}
}

// reconcile starts a replicator for each installed agent without one and
// stops those of agents removed (or whose owner changed).
func (s *serveState) reconcile(ctx context.Context) {
	want := map[string]string{} // agent -> owner
	for _, a := range s.c.daemon.List() {
		if a.Owner != "" {
			want[a.PubKey] = a.Owner
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for pk, r := range s.running {
		if owner, ok := want[pk]; !ok || owner != r.owner {
			r.stop()
			delete(s.running, pk)
		}
	}
	for pk, owner := range want {
		if _, ok := s.running[pk]; ok || ctx.Err() != nil {
			continue
		}
		r, err := s.start(ctx, pk, owner)
		if err != nil {
			s.log.Error("state replication: cannot start", "agent", pk, "err", err)
			continue // retried at the next reconcile
		}
		s.running[pk] = r
	}
}

// start runs a replicator for agent over the local relay and the peers.
func (s *serveState) start(ctx context.Context, agent, owner string) (*agentReplicator, error) {
	sk, err := s.c.daemon.SecretKey(agent)
	if err != nil {
		return nil, err
	}
	local := &replicate.Local{Relay: s.c.relay}
	links := []replicate.Link{local.Link("local")}
	var ws []*replicate.WSRelay
	seen := map[string]bool{}
	for _, p := range s.c.Config.Peers {
		if seen[p] {
			continue
		}
		seen[p] = true
		w := replicate.NewWSRelay(p, sk, s.log)
		ws = append(ws, w)
		links = append(links, w.Link())
	}
	rep, err := replicate.New(s.rt.Store(), replicate.Config{SecretKey: sk, Owner: owner,
		Directory: s.dir, Schemas: s.rt.Schemas(), Links: links, Logger: s.log,
		AntiEntropyInterval: s.c.antiEntropyInterval()})
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithCancel(ctx)
	r := &agentReplicator{owner: owner, rep: rep, ws: ws, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		rep.Run(rctx)
	}()
	s.log.Info("state replication started", "agent", agent, "owner", owner, "peers", len(ws))
	return r, nil
}

// stop ends the replicator, waits for it and closes its connections.
func (r *agentReplicator) stop() {
	r.cancel()
	<-r.done
	for _, w := range r.ws {
		w.Close()
	}
}

func (s *serveState) stopAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for pk, r := range s.running {
		r.stop()
		delete(s.running, pk)
	}
}

// Replicators returns the running replicators by agent pubkey (tests,
// status).
func (c *ServeCommand) Replicators() map[string]*replicate.Replicator {
	out := map[string]*replicate.Replicator{}
	if c.asm == nil {
		return out
	}
	c.asm.mu.Lock()
	defer c.asm.mu.Unlock()
	for pk, r := range c.asm.running {
		out[pk] = r.rep
	}
	return out
}

// claimsDirectory is the replicators' Directory: an owner's agents are
// those its latest kind 14199 on the local relay lists whose own latest
// kind 0 names the owner (relay.VerifyAgent: the two-way NIP-AE link).
// They read the owner's shared state and may write the owner's state.
type claimsDirectory struct {
	q relay.Querier

	mu    sync.Mutex
	cache map[string]dirEntry
}

type dirEntry struct {
	agents []string
	at     time.Time
}

var _ replicate.Directory = (*claimsDirectory)(nil)

// notify drops the cache when a profile or owner claims are stored (an
// OnStored hook: it must not block).
func (d *claimsDirectory) notify(evt *nostr.Event) {
	if evt.Kind != events.KindProfile && evt.Kind != events.KindOwnerClaims {
		return
	}
	d.mu.Lock()
	clear(d.cache)
	d.mu.Unlock()
}

// Agents returns owner's verified agents.
func (d *claimsDirectory) Agents(ctx context.Context, owner string) ([]string, error) {
	d.mu.Lock()
	e, ok := d.cache[owner]
	d.mu.Unlock()
	if ok && time.Since(e.at) < directoryTTL {
		return e.agents, nil
	}
	linked, err := relay.OwnerAgents(ctx, d.q, owner) // one claims read, one profile query
	if err != nil {
		return nil, err
	}
	var agents []string
	for _, v := range linked {
		if v.Verified {
			agents = append(agents, v.Agent)
		}
	}
	d.mu.Lock()
	d.cache[owner] = dirEntry{agents: agents, at: time.Now()}
	d.mu.Unlock()
	return agents, nil
}
