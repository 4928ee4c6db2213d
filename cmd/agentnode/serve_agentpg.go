package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/agentpg"
	"github.com/agentnode/agentnode/agentd/keystore"
	"github.com/agentnode/agentnode/agentd/lease"
	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/internal/lifecycle"
)

// serveShared is the agent daemon's side of --postgres (docs/SCALE.md,
// "Agents across instances"): the agents' keys, records, files, token,
// tasks, consent, directory registrations, DM ledger and ASM op log live
// in the database (agentd/agentpg), and each installed agent runs on the
// one instance holding its lease (agentd/lease). Handover starts an agent
// here once its lease is gained and its state replayed; every part that
// acts for "the local agents" (DMs, 25910 server, heartbeats, state
// replicators) asks runsHere. Nil in the embedded default.
type serveShared struct {
	db      *agentpg.DB
	leases  *lease.Manager
	h       *agentpg.Handover
	sync    *agentpg.StateSync // set by openState
	token   string             // the shared API token
	changed chan struct{}      // the agents running here changed (cap 1)
	topics  topicQueue         // DB.Listen's topics, drained by runListen
	reloads gap                // anonymous reloads of the installed agents (serve_forward.go)
	fwd     *http.Client       // calls forwarded to an agent's holder (serve_forward.go)
}

// openShared opens the agent data and the leases in the database, and
// makes the shared API token this instance's token file too (the CLI
// reads it from --data).
func (c *ServeCommand) openShared(ctx context.Context, logger *slog.Logger) error {
	url := c.postgresURL()
	if url == "" {
		return nil
	}
	db, err := agentpg.Open(ctx, url)
	if err != nil {
		return fmt.Errorf("serve: agent data in postgres: %w", err)
	}
	c.onClose(func(context.Context) error { db.Close(); return nil })
	leases, err := lease.Open(ctx, url, lease.Config{TTL: c.leaseTTL(), Balance: true, URL: c.advertiseURL(),
		Logger: logger.With("component", "lease")})
	if err != nil {
		return fmt.Errorf("serve: agent leases: %w", err)
	}
	c.onClose(func(context.Context) error { leases.Close(); return nil })
	// Before the pool closes (closers run backwards): hand every lease back,
	// so that the other instances take the agents at their next tick.
	c.onClose(leases.ReleaseAll)
	s := &serveShared{db: db, leases: leases, changed: make(chan struct{}, 1),
		fwd: forwardClient(time.Duration(c.httpConfig().LongWriteTimeoutSeconds) * time.Second)}
	s.topics.init()
	s.h = &agentpg.Handover{Leases: leases, Logger: logger.With("component", "handover"), Changed: s.signal}
	c.shared = s
	if err := c.writeSharedToken(ctx); err != nil {
		return err
	}
	logger.Info("agents shared in postgres", "instance", leases.Instance(), "lease_ttl", leases.TTL().String(), "advertise_url", c.advertiseURL())
	return nil
}

// writeSharedToken writes the database's API token to --data's token file.
func (c *ServeCommand) writeSharedToken(ctx context.Context) error {
	token, err := c.shared.db.Token(ctx)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	c.shared.token = token
	path := agentd.TokenPath(c.Config.DataDir)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		return fmt.Errorf("serve: write the API token: %w", err)
	}
	return nil
}

// signal notes that the agents running here changed (Handover.Changed).
func (s *serveShared) signal() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// sharedChanged is the channel followAgents also waits on; nil (never
// ready) in the embedded default.
func (c *ServeCommand) sharedChanged() <-chan struct{} {
	if c.shared == nil {
		return nil
	}
	return c.shared.changed
}

// leaseTTL is --lease-ttl, else the config's postgres.lease_ttl_seconds,
// else lease.DefaultTTL.
func (c *ServeCommand) leaseTTL() time.Duration {
	var file time.Duration
	if c.file != nil {
		file = time.Duration(c.file.Postgres.LeaseTTLSeconds * float64(time.Second))
	}
	return cmp.Or(c.Config.LeaseTTL, file, lease.DefaultTTL)
}

// advertiseURL is where other instances reach this one: --advertise-url,
// else the config's postgres.advertise_url, else http:// and the bound
// address (the host name instead of an unspecified address).
func (c *ServeCommand) advertiseURL() string {
	if c.Config.AdvertiseURL != "" {
		return c.Config.AdvertiseURL
	}
	if c.file != nil && c.file.Postgres.AdvertiseURL != "" {
		return c.file.Postgres.AdvertiseURL
	}
	host, port, err := net.SplitHostPort(c.Addr())
	if err != nil {
		return "http://" + c.Addr()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if h, err := os.Hostname(); err == nil {
			host = h
		}
	}
	return "http://" + net.JoinHostPort(host, port)
}

// runsHere reports whether agent runs on this instance: installed, and
// with --postgres also held and replayed here.
func (c *ServeCommand) runsHere(agent string) bool {
	if !c.isLocal(agent) {
		return false
	}
	return c.shared == nil || c.shared.h.Runs(agent)
}

// sharedParts are serve's parts with --postgres, started once DMs are
// ready (a takeover catches up on the agent's DMs): the change
// dispatcher, the lease ticks, the handover that starts and stops agents.
// They stop before DMs; Close then hands the leases back (openShared).
func (c *ServeCommand) sharedParts() []lifecycle.Part {
	if c.shared == nil {
		return nil
	}
	return []lifecycle.Part{
		lifecycle.Func("agent data changes", c.runListen),
		lifecycle.Func("agent leases", c.shared.leases.Run),
		lifecycle.Func("agent handover", c.shared.h.Run),
	}
}

// daemonShared points the daemon at the shared stores and the leases.
func (c *ServeCommand) daemonShared(ctx context.Context, cfg *agentd.Config) error {
	if c.shared == nil {
		return nil
	}
	db := c.shared.db
	token, err := db.Token(ctx)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if cfg.Passphrase == "" {
		cfg.Logger.Warn("agent keys are stored in the shared database as plain hex: set --passphrase-file or AGENTNODE_PASSPHRASE (the same on every instance) to encrypt them (NIP-49)")
	}
	cfg.Keys = db.Keys(keystore.Options{Passphrase: cfg.Passphrase, LogN: cfg.KeyLogN})
	cfg.Records, cfg.Files, cfg.Token, cfg.Placement = db.Agents(), db.Files(), token, c.shared.leases
	cfg.State = &agentpg.StateRuntime{Inner: c.asm.rt, Sync: c.shared.sync}
	return nil
}

// placeAgents gives every installed agent its lease row (idempotent: it
// covers agents installed before, and an Add that failed at install).
func (c *ServeCommand) placeAgents(ctx context.Context) error {
	if c.shared == nil {
		return nil
	}
	c.shared.h.Daemon = c.daemon
	for _, a := range c.daemon.List() {
		if err := c.shared.leases.Add(ctx, a.PubKey); err != nil {
			return fmt.Errorf("serve: lease for agent %s: %w", a.PubKey, err)
		}
	}
	return nil
}

// sharedState makes the SQLite state runtime a cache of the op log:
// schemas and ops of documents of no agent are replayed now, an agent's
// when it is taken over (Handover).
func (c *ServeCommand) sharedState(ctx context.Context, rt *state.Runtime, log *slog.Logger) error {
	if c.shared == nil {
		return nil
	}
	register := func(ctx context.Context, capID string, raw []byte) error {
		_, err := rt.Register(ctx, capID, raw)
		return err
	}
	st := rt.Store()
	c.shared.sync = c.shared.db.NewStateSync(st, string(st.Replica()), register, c.shared.h.Lease, log)
	c.shared.h.State = c.shared.sync
	if _, err := c.shared.sync.Takeover(ctx, ""); err != nil {
		return fmt.Errorf("serve: replay the shared state: %w", err)
	}
	return nil
}

// runListen reads the database's change notifications until ctx ends and
// brings this instance's copies up to date; Listen only queues the topics
// (its callback must be short), this goroutine does the I/O.
func (c *ServeCommand) runListen(ctx context.Context) error {
	s := c.shared
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { _ = s.db.Listen(ctx, s.topics.add) })
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.topics.ready:
		}
		for _, topic := range s.topics.take() {
			if err := c.reloadTopic(ctx, topic); err != nil && ctx.Err() == nil {
				slog.Warn("reloading after a change elsewhere", "topic", topic, "err", err)
			}
		}
	}
}

// reloadTopic applies one agentpg topic to this instance's copies.
func (c *ServeCommand) reloadTopic(ctx context.Context, topic string) error {
	switch topic {
	case agentpg.TopicAgents:
		if err := c.daemon.Reload(ctx); err != nil {
			return err
		}
		c.shared.signal() // installed, removed or upgraded elsewhere: beat, announce
	case agentpg.TopicRevoked:
		return c.acp.consent.Reload(ctx)
	case agentpg.TopicTasks:
		c.acp.tasks.Wake()
		return c.pickupTasks(ctx) // one delegated elsewhere to an agent running here
	case agentpg.TopicConsent:
		c.acp.consent.Wake()
	case agentpg.TopicRegistrations:
		return c.rt.dir.ReloadRegistrations(ctx)
	}
	return nil
}

// topicQueue collects distinct topics; ready has a value while some wait.
type topicQueue struct {
	mu      sync.Mutex
	pending []string
	ready   chan struct{}
}

func (q *topicQueue) init() { q.ready = make(chan struct{}, 1) }

// add queues topic (TopicAll: every topic); it never blocks.
func (q *topicQueue) add(topic string) {
	topics := []string{topic}
	if topic == agentpg.TopicAll {
		topics = []string{agentpg.TopicAgents, agentpg.TopicRevoked, agentpg.TopicTasks, agentpg.TopicConsent, agentpg.TopicRegistrations}
	}
	q.mu.Lock()
	for _, t := range topics {
		if !slices.Contains(q.pending, t) {
			q.pending = append(q.pending, t)
		}
	}
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// take returns the queued topics and empties the queue.
func (q *topicQueue) take() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.pending
	q.pending = nil
	return out
}

// pickupTasks starts the tasks of the agents running here that another
// instance left (agentrpc.Config.Runs): on a task change elsewhere and when
// an agent starts running here (a takeover resumes its tasks).
func (c *ServeCommand) pickupTasks(ctx context.Context) error {
	if c.shared == nil || c.acp == nil || c.acp.svc == nil {
		return nil
	}
	return c.acp.svc.Pickup(ctx)
}
