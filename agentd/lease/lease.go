package lease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Defaults of Config.
const (
	DefaultTTL = 15 * time.Second
	// DefaultChanges is the capacity of the Changes channel.
	DefaultChanges = 64
)

// Lease is one agent's lease as the database recorded it.
type Lease struct {
	Agent    string
	Holder   string    // instance id; "" when free
	URL      string    // where Holder says it can be reached (Config.URL)
	Epoch    int64     // fencing token: grows every time the lease changes hands
	Acquired time.Time // when Holder took it (database clock)
	Expires  time.Time // database clock
}

// Change is a lease this instance gained (Held: start the agent) or lost
// (stop it at once: another instance may hold it now).
type Change struct {
	Lease Lease
	Held  bool
}

// Config configures a Manager. The zero value works.
type Config struct {
	// Instance names this instance in the lease rows; "": host:pid:random.
	Instance string
	// TTL is how long a lease lasts without renewal; 0: DefaultTTL.
	TTL time.Duration
	// Interval between Run's ticks (renew held, take free); 0: TTL/4.
	// A renewal that fails fast is retried at the next tick; leases are
	// reported lost once a renewal in time is no longer possible.
	Interval time.Duration
	// MaxHeld caps the leases Run takes (0: no cap), so that a second
	// instance finds agents left to run.
	MaxHeld int
	// Balance makes Run hold at most its fair share, ceil(agents / live
	// instances), taking no more and handing back the excess (one tick of
	// downtime for each agent handed over), so that a joining instance
	// gets agents to run.
	Balance bool
	// URL is where this instance can be reached, recorded with its leases
	// so that other instances can forward an agent's requests to it.
	URL string
	// Logger; nil: slog.Default().
	Logger *slog.Logger
	// Now is the local clock the renewal deadlines are kept on; nil:
	// time.Now. Expiry itself is the database's clock; tests inject a
	// clock (testkit.Clock) to move the deadlines without waiting.
	Now func() time.Time
}

func (c Config) withDefaults() Config {
	if c.TTL <= 0 {
		c.TTL = DefaultTTL
	}
	if c.Interval <= 0 {
		c.Interval = c.TTL / 4
	}
	if c.Instance == "" {
		c.Instance = instanceID()
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// instanceID is host:pid:random, unique per process start.
func instanceID() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), hex.EncodeToString(b))
}

// Manager holds this instance's leases. Its methods are safe for
// concurrent use; Run runs once per Manager.
type Manager struct {
	pool    *pgxpool.Pool
	ownPool bool
	cfg     Config
	changes chan Change

	mu   sync.Mutex
	held map[string]held // agent -> lease held by Run
}

// held is a lease Run holds and the local time by which it must have been
// renewed (a renewal sent later than deadline-TTL may arrive too late).
type held struct {
	Lease
	deadline time.Time
}

// Open connects to url, migrates the lease tables and returns a Manager
// that closes its connections on Close.
func Open(ctx context.Context, url string, cfg Config) (*Manager, error) {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("lease: open: %w", err)
	}
	m, err := New(ctx, pool, cfg)
	if err != nil {
		pool.Close()
		return nil, err
	}
	m.ownPool = true
	return m, nil
}

// New migrates the lease tables in pool's database and returns a Manager
// on pool (which Close leaves open).
func New(ctx context.Context, pool *pgxpool.Pool, cfg Config) (*Manager, error) {
	if err := migrate(ctx, pool); err != nil {
		return nil, err
	}
	return &Manager{pool: pool, cfg: cfg.withDefaults(), changes: make(chan Change, DefaultChanges), held: map[string]held{}}, nil
}

// Close closes the connections Open made. It does not release the leases:
// call ReleaseAll first for a clean handover.
func (m *Manager) Close() {
	if m.ownPool {
		m.pool.Close()
	}
}

// Instance is this instance's id in the lease rows.
func (m *Manager) Instance() string { return m.cfg.Instance }

// TTL is the lease duration.
func (m *Manager) TTL() time.Duration { return m.cfg.TTL }

// Changes delivers Run's lease changes in order; it is closed when Run
// returns, and from then on every lease must be taken as lost. Read it
// promptly: Run waits for room before its next renewal.
func (m *Manager) Changes() <-chan Change { return m.changes }

// Held returns the leases Run holds now.
func (m *Manager) Held() []Lease {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Lease, 0, len(m.held))
	for _, h := range m.held {
		out = append(out, h.Lease)
	}
	return out
}

// Add makes agent one to run: a free lease row (a no-op if it has one).
func (m *Manager) Add(ctx context.Context, agent string) error {
	_, err := m.pool.Exec(ctx, `INSERT INTO agent_leases (agent) VALUES ($1) ON CONFLICT DO NOTHING`, agent)
	if err != nil {
		return fmt.Errorf("lease: add %s: %w", agent, err)
	}
	return nil
}

// Remove deletes agent's lease row (at uninstall): its holder loses it at
// its next renewal.
func (m *Manager) Remove(ctx context.Context, agent string) error {
	if _, err := m.pool.Exec(ctx, `DELETE FROM agent_leases WHERE agent = $1`, agent); err != nil {
		return fmt.Errorf("lease: remove %s: %w", agent, err)
	}
	return nil
}

// leaseCols are a lease row's columns as scanLease reads them; a free
// row's expires_at is -infinity, which time.Time cannot hold: it reads as
// the Unix epoch (expired all the same).
const leaseCols = `agent, holder, holder_url, epoch, acquired_at,
	CASE WHEN isfinite(expires_at) THEN expires_at ELSE 'epoch'::timestamptz END`

func scanLease(row pgx.Row) (Lease, error) {
	var l Lease
	err := row.Scan(&l.Agent, &l.Holder, &l.URL, &l.Epoch, &l.Acquired, &l.Expires)
	return l, err
}

// Get returns agent's lease as recorded now (ErrNotFound without a row).
func (m *Manager) Get(ctx context.Context, agent string) (Lease, error) {
	l, err := scanLease(m.pool.QueryRow(ctx, `SELECT `+leaseCols+` FROM agent_leases WHERE agent = $1`, agent))
	if errors.Is(err, pgx.ErrNoRows) {
		return Lease{}, fmt.Errorf("%w: %s", ErrNotFound, agent)
	}
	if err != nil {
		return Lease{}, fmt.Errorf("lease: get %s: %w", agent, err)
	}
	return l, nil
}

// Holds returns the lease Run holds for agent, if it holds one.
func (m *Manager) Holds(agent string) (Lease, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h, ok := m.held[agent]
	return h.Lease, ok
}
