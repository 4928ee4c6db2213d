package consent

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/agentnode/agentnode/agentd/internal/sqlitedb"
)

// Config configures a Consent store. Only Path is required.
type Config struct {
	Path   string // the SQLite file (created with its directory if missing)
	Policy Policy // nil Require: DefaultPolicy
	// Now is the clock; nil: time.Now.
	Now func() time.Time
	// NewID makes approval ids; nil: 8 random bytes in hex.
	NewID func() string
}

// Consent holds the policy, the approvals and the revoked agents. It is
// safe for concurrent use; Revoked is answered from memory.
type Consent struct {
	db  *sql.DB
	cfg Config

	mu      sync.Mutex // writes, revoked, changed, closed
	revoked map[string]bool
	changed chan struct{}
	closed  bool
}

const ddl = `CREATE TABLE IF NOT EXISTS approvals (
	id      TEXT PRIMARY KEY,
	status  TEXT NOT NULL,
	created INTEGER NOT NULL, -- unix ms
	doc     TEXT NOT NULL     -- the Approval as JSON
);
CREATE TABLE IF NOT EXISTS revoked (
	agent  TEXT PRIMARY KEY,
	reason TEXT NOT NULL DEFAULT '',
	at     INTEGER NOT NULL   -- unix ms
);`

// Open opens (creating if needed) the consent file and loads the revoked list.
func Open(ctx context.Context, cfg Config) (*Consent, error) {
	if cfg.Path == "" {
		return nil, fmt.Errorf("consent: Config.Path is required")
	}
	cfg = withDefaults(cfg)
	db, err := sqlitedb.Open(ctx, cfg.Path, ddl)
	if err != nil {
		return nil, fmt.Errorf("consent: %w", err)
	}
	c := &Consent{db: db, cfg: cfg, revoked: map[string]bool{}, changed: make(chan struct{})}
	if err := c.init(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return c, nil
}

func withDefaults(cfg Config) Config {
	if cfg.Policy.Require == nil {
		cfg.Policy = DefaultPolicy
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NewID == nil {
		cfg.NewID = func() string {
			b := make([]byte, 8)
			_, _ = rand.Read(b)
			return hex.EncodeToString(b)
		}
	}
	return cfg
}

func (c *Consent) init(ctx context.Context) error {
	list, err := c.RevokedList(ctx)
	if err != nil {
		return err
	}
	for _, r := range list {
		c.revoked[r.Agent] = true
	}
	return nil
}

// Policy returns the policy in force.
func (c *Consent) Policy() Policy { return c.cfg.Policy }

// Required reports whether op needs the owner's approval.
func (c *Consent) Required(op string) bool { return c.cfg.Policy.Requires(op) }

// Close closes the file and wakes every Wait. Closing twice is a no-op.
func (c *Consent) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	close(c.changed)
	return c.db.Close()
}

// notify wakes the waiters. Call with c.mu held.
func (c *Consent) notify() {
	close(c.changed)
	c.changed = make(chan struct{})
}
