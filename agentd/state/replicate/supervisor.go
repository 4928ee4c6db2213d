package replicate

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// DefaultRecheck is how often a Supervisor compares the agents with its
// running replicators even without a Refresh.
const DefaultRecheck = 5 * time.Second

// SupervisorConfig configures a Supervisor.
type SupervisorConfig struct {
	// Agents are the agents to replicate for: agent pubkey -> owner pubkey
	// (hex). Called at every reconcile.
	Agents func() map[string]string
	// SecretKey is an agent's key (it signs, decrypts and AUTHs).
	SecretKey func(ctx context.Context, agent string) (string, error)
	// Local is the node's own relay, in-process (Local link "local").
	Local LocalRelay
	// Peers are websocket relays each replicator also syncs with (NIP-42
	// AUTH with the agent's key); duplicates are dropped.
	Peers []string
	// Store is the state store every replicator reads and applies to.
	Store Store
	// Template is each replicator's Config; SecretKey, Owner and Links are
	// set per agent.
	Template Config
	// Recheck: 0 = DefaultRecheck.
	Recheck time.Duration
	// Logger: nil = slog.Default().
	Logger *slog.Logger
}

// Supervisor runs one Replicator per agent that has an owner, over the
// local relay and every peer: Run starts replicators for new agents and
// stops (cancel, wait, close sockets) those of agents removed or whose
// owner changed. New starts nothing.
type Supervisor struct {
	cfg  SupervisorConfig
	log  *slog.Logger
	wake chan struct{}

	mu      sync.Mutex
	running map[string]*supervised // by agent pubkey
}

// supervised is one running replicator and what it owns.
type supervised struct {
	owner  string
	rep    *Replicator
	ws     []*WSRelay
	cancel context.CancelFunc
	done   chan struct{}
}

// NewSupervisor returns a Supervisor for cfg.
func NewSupervisor(cfg SupervisorConfig) *Supervisor {
	if cfg.Recheck <= 0 {
		cfg.Recheck = DefaultRecheck
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Supervisor{cfg: cfg, log: cfg.Logger, wake: make(chan struct{}, 1), running: map[string]*supervised{}}
}

// Plan compares the running replicators (agent -> owner) with the wanted
// ones and returns the agents whose replicator stops (removed, or owner
// changed) and those for which one starts (new, or owner changed), sorted.
func Plan(running, want map[string]string) (stop, start []string) {
	for agent, owner := range running {
		if w, ok := want[agent]; !ok || w != owner {
			stop = append(stop, agent)
		}
	}
	for agent, owner := range want {
		if r, ok := running[agent]; !ok || r != owner {
			start = append(start, agent)
		}
	}
	slices.Sort(stop)
	slices.Sort(start)
	return stop, start
}

// Refresh asks Run to compare agents and replicators now (never blocks).
func (s *Supervisor) Refresh() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run reconciles at once, on every Refresh and every Recheck until ctx
// ends; it returns nil once every replicator stopped.
func (s *Supervisor) Run(ctx context.Context) error {
	defer s.stopAll()
	t := time.NewTicker(s.cfg.Recheck)
	defer t.Stop()
	for {
		s.reconcile(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-s.wake:
		case <-t.C:
		}
	}
}

// Replicators returns the running replicators by agent pubkey.
func (s *Supervisor) Replicators() map[string]*Replicator {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]*Replicator, len(s.running))
	for pk, r := range s.running {
		out[pk] = r.rep
	}
	return out
}

// reconcile applies Plan; a replicator that cannot start is retried at the
// next reconcile.
func (s *Supervisor) reconcile(ctx context.Context) {
	want := s.cfg.Agents()
	s.mu.Lock()
	defer s.mu.Unlock()
	running := make(map[string]string, len(s.running))
	for pk, r := range s.running {
		running[pk] = r.owner
	}
	stop, start := Plan(running, want)
	for _, pk := range stop {
		s.running[pk].stop()
		delete(s.running, pk)
	}
	for _, pk := range start {
		if ctx.Err() != nil {
			return
		}
		r, err := s.start(ctx, pk, want[pk])
		if err != nil {
			s.log.Error("state replication: cannot start", "agent", pk, "err", err)
			continue
		}
		s.running[pk] = r
	}
}

// start runs a replicator for agent over the local relay and the peers.
func (s *Supervisor) start(ctx context.Context, agent, owner string) (*supervised, error) {
	sk, err := s.cfg.SecretKey(ctx, agent)
	if err != nil {
		return nil, err
	}
	links := []Link{(&Local{Relay: s.cfg.Local}).Link("local")}
	var ws []*WSRelay
	for _, p := range uniq(s.cfg.Peers) {
		w := NewWSRelay(p, sk, s.log)
		ws = append(ws, w)
		links = append(links, WSLink(w))
	}
	cfg := s.cfg.Template
	cfg.SecretKey, cfg.Owner, cfg.Links = sk, owner, links
	rep, err := New(s.cfg.Store, cfg)
	if err != nil {
		closeAll(ws)
		return nil, err
	}
	rctx, cancel := context.WithCancel(ctx)
	r := &supervised{owner: owner, rep: rep, ws: ws, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		rep.Run(rctx)
	}()
	s.log.Info("state replication started", "agent", agent, "owner", owner, "peers", len(ws))
	return r, nil
}

// stop ends the replicator, waits for it and closes its connections.
func (r *supervised) stop() {
	r.cancel()
	<-r.done
	closeAll(r.ws)
}

func (s *Supervisor) stopAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for pk, r := range s.running {
		r.stop()
		delete(s.running, pk)
	}
}

func closeAll(ws []*WSRelay) {
	for _, w := range ws {
		w.Close()
	}
}

// uniq is list without repeats, in first-seen order.
func uniq(list []string) []string {
	var out []string
	for _, v := range list {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}
