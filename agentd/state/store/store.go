package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver: pure Go, JSON functions built in

	"github.com/agentnode/agentnode/agentd/state/crdt"
	"github.com/agentnode/agentnode/agentd/state/schema"
)

// Sentinel errors.
var (
	// ErrNotFound is returned for a document that does not exist.
	ErrNotFound = errors.New("store: not found")
	// ErrUnknownSchema is returned for an op or call naming a schema the
	// resolver does not know.
	ErrUnknownSchema = errors.New("store: unknown schema")
	// ErrInvalidEnvelope is returned for a remote op that is malformed,
	// too far in the future, or refused by its CRDT.
	ErrInvalidEnvelope = errors.New("store: invalid op envelope")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("store: closed")
)

// FileName is the database file inside the data directory.
const FileName = "state.db"

// Defaults for Config.
const (
	DefaultCacheSize   = 256
	DefaultMaxDrift    = time.Hour
	DefaultBusyTimeout = 10 * time.Second
)

// Resolver finds schemas by URI; *schema.Registry is one.
type Resolver interface {
	Lookup(uri string) (*schema.Schema, bool)
}

var _ Resolver = (*schema.Registry)(nil)

// Config configures a Store.
type Config struct {
	Dir       string           // data directory; the database is Dir/state.db
	Schemas   Resolver         // schemas of remote ops; required
	Now       func() time.Time // wall clock of the HLC; nil = time.Now
	Replica   crdt.ReplicaID   // "" = the id stored in the database (made on first open)
	CacheSize int              // documents whose CRDTs stay in memory; 0 = DefaultCacheSize
	MaxDrift  time.Duration    // remote ops further in the future are refused; 0 = DefaultMaxDrift
}

// Store is the SQLite state store: per namespace a documents table, an op
// log and a snapshot table. Writes are serialised by one lock and each is
// one transaction; reads go straight to SQLite (WAL lets them run beside a
// writer). A Store is safe for concurrent use.
type Store struct {
	db       *sql.DB
	cfg      Config
	clock    *crdt.HLC
	replica  crdt.ReplicaID
	mu       sync.Mutex // writes, the cache and prepared
	cache    *lru
	prepared map[string]bool
	closed   bool
	changes  notifier // closed channel per committed write (Changed)
}

// Open opens (creating if needed) Dir/state.db in WAL mode with
// synchronous=FULL, creates the meta tables, loads or makes the replica id
// and primes the clock past every op this replica has written.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Schemas == nil {
		return nil, errors.New("store: Config.Schemas is required")
	}
	cfg = withDefaults(cfg)
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	db, err := sql.Open("sqlite", dsn(filepath.Join(cfg.Dir, FileName)))
	if err != nil {
		return nil, fmt.Errorf("store: open: %w", err)
	}
	s := &Store{db: db, cfg: cfg, cache: newLRU(cfg.CacheSize), prepared: map[string]bool{}}
	if err := s.init(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

func withDefaults(cfg Config) Config {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.CacheSize <= 0 {
		cfg.CacheSize = DefaultCacheSize
	}
	if cfg.MaxDrift <= 0 {
		cfg.MaxDrift = DefaultMaxDrift
	}
	return cfg
}

// dsn sets the pragmas on every connection: WAL, synchronous=FULL (a commit
// is on disk when it returns), a busy timeout, and BEGIN IMMEDIATE for write
// transactions so that a second process waits instead of failing.
func dsn(path string) string {
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", DefaultBusyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	return "file:" + path + "?" + q.Encode()
}

func (s *Store) init(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, metaDDL); err != nil {
		return fmt.Errorf("store: create meta tables: %w", err)
	}
	replica, err := s.loadReplica(ctx)
	if err != nil {
		return err
	}
	s.replica = replica
	s.clock = crdt.NewHLC(replica, s.cfg.Now)
	return s.primeClock(ctx)
}

// loadReplica returns Config.Replica, else the stored id, else a new random
// one (stored).
func (s *Store) loadReplica(ctx context.Context) (crdt.ReplicaID, error) {
	if s.cfg.Replica != "" {
		return s.cfg.Replica, nil
	}
	var id string
	err := s.db.QueryRowContext(ctx, `SELECT value FROM asm_meta WHERE key = 'replica'`).Scan(&id)
	if err == nil {
		return crdt.ReplicaID(id), nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("store: read replica id: %w", err)
	}
	b := make([]byte, 8)
	rand.Read(b)
	id = hex.EncodeToString(b)
	if _, err := s.db.ExecContext(ctx, `INSERT INTO asm_meta (key, value) VALUES ('replica', ?)`, id); err != nil {
		return "", fmt.Errorf("store: save replica id: %w", err)
	}
	return crdt.ReplicaID(id), nil
}

// primeClock makes the HLC hand out counters and timestamps above every op
// this replica has logged, so op ids stay unique across restarts.
func (s *Store) primeClock(ctx context.Context) error {
	prefixes, err := s.Namespaces(ctx)
	if err != nil {
		return err
	}
	var ctr uint64
	var wall int64
	for _, p := range prefixes {
		var c, w sql.NullInt64
		q := fmt.Sprintf(`SELECT max(ctr_end), max(wall) FROM %s_ops WHERE replica = ?`, p)
		if err := s.db.QueryRowContext(ctx, q, string(s.replica)).Scan(&c, &w); err != nil {
			return fmt.Errorf("store: prime clock: %w", err)
		}
		ctr, wall = max(ctr, uint64(c.Int64)), max(wall, w.Int64)
	}
	witness(s.clock, ctr, wall)
	return nil
}

// witness advances clock past counter ctr and wall time wall. The crdt
// package lets a clock witness counters only through a CRDT that has seen
// them, so a throwaway counter applies a zero op with that id and stamps one.
func witness(clock *crdt.HLC, ctr uint64, wall int64) {
	if ctr == 0 {
		return
	}
	c := crdt.NewPNCounter()
	_ = c.Apply(crdt.Op{ID: crdt.OpID{Replica: "~prime", Counter: ctr}, TS: crdt.Timestamp{Wall: wall}, Kind: crdt.OpInc})
	c.Bind(clock)
	_, _ = c.Add(0)
}

// Close closes the database. ctx is unused: closing SQLite does not block
// on the network.
func (s *Store) Close(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return s.db.Close()
}

// DB returns the database handle for read-only queries (ASM-QL).
func (s *Store) DB() *sql.DB { return s.db }

// Replica returns this store's replica id.
func (s *Store) Replica() crdt.ReplicaID { return s.replica }

// Clock returns the store's hybrid logical clock.
func (s *Store) Clock() *crdt.HLC { return s.clock }

// Now returns the configured wall clock's time.
func (s *Store) Now() time.Time { return s.cfg.Now() }
