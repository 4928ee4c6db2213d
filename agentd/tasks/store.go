package tasks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// DefaultInterval is how often the deadline goroutine looks for overdue tasks.
const DefaultInterval = time.Second

// Config configures a Store. Only Path is required.
type Config struct {
	// Path is the SQLite file (created with its directory if missing).
	Path string
	// Backend, when set, replaces the file at Path (a database several
	// instances share: agentd/agentpg); Close closes it.
	Backend Backend
	// Poll, when > 0, makes Wait read the task again at least this often:
	// on a shared Backend, changes made by other instances wake no one
	// here. 0: only this Store's own changes wake Wait.
	Poll time.Duration
	// Interval between deadline sweeps; 0: DefaultInterval.
	Interval time.Duration
	// Now is the clock; nil: time.Now.
	Now func() time.Time
	// NewID makes task ids; nil: 16 random bytes in hex.
	NewID func() string
	// OnChange, when set, is called after every committed change with the
	// task as stored (on the changing goroutine; it must not block).
	OnChange func(Task)
	// Logger; nil: slog.Default().
	Logger *slog.Logger
}

// Store is the persisted task queue. Writes are serialised; it is safe for
// concurrent use. Open starts nothing; Run enforces deadlines until its
// ctx ends; Close closes the file (after Run has returned).
type Store struct {
	b   Backend
	cfg Config

	mu      sync.Mutex // writes and changed
	changed chan struct{}
	closed  bool
}

// Open opens (creating if needed) the task file at cfg.Path, or uses
// cfg.Backend.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	b := cfg.Backend
	if b == nil {
		if cfg.Path == "" {
			return nil, fmt.Errorf("tasks: Config.Path or Config.Backend is required")
		}
		var err error
		if b, err = OpenSQLite(ctx, cfg.Path); err != nil {
			return nil, err
		}
	}
	return &Store{b: b, cfg: withDefaults(cfg), changed: make(chan struct{})}, nil
}

func withDefaults(cfg Config) Config {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NewID == nil {
		cfg.NewID = randomID
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return cfg
}

// dsn: WAL, synchronous=FULL (a change is on disk when it returns), a busy
// timeout, BEGIN IMMEDIATE for writes.

func randomID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Run expires the tasks whose deadline has passed (ExpireDue) every
// Interval until ctx ends; then it returns nil.
func (s *Store) Run(ctx context.Context) error {
	tick := time.NewTicker(s.cfg.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			if _, err := s.ExpireDue(ctx); err != nil && ctx.Err() == nil {
				s.cfg.Logger.Warn("tasks: deadline sweep", "err", err)
			}
		}
	}
}

// Close closes the file (or Config.Backend). Closing twice is a no-op.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	close(s.changed)
	return s.b.Close()
}
