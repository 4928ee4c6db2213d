package consent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"
)

// Config configures a Consent store. Only Path is required.
type Config struct {
	Path   string // the SQLite file (created with its directory if missing)
	Policy Policy // nil Require: DefaultPolicy
	// Now is the clock; nil: time.Now.
	Now func() time.Time
	// NewID makes approval ids; nil: 8 random bytes in hex.
	NewID func() string
	// Backend, when set, replaces the file at Path (a database several
	// instances share: agentd/agentpg); Close closes it.
	Backend Backend
	// Poll, when > 0, makes Wait read the approval again at least this
	// often (decisions made through another instance wake no one here).
	Poll time.Duration
	// Refresh, when > 0, makes Revoked re-read the revoked list when its
	// copy is older than this (revocations made through another instance).
	Refresh time.Duration
}

// Consent holds the policy, the approvals and the revoked agents. It is
// safe for concurrent use; Revoked is answered from memory.
type Consent struct {
	b   Backend
	cfg Config

	mu      sync.Mutex // writes, revoked, loaded, changed, closed
	revoked map[string]bool
	loaded  time.Time // when revoked was read
	changed chan struct{}
	closed  bool
}

// Open opens (creating if needed) the consent file and loads the revoked list.
func Open(ctx context.Context, cfg Config) (*Consent, error) {
	b := cfg.Backend
	if b == nil {
		if cfg.Path == "" {
			return nil, fmt.Errorf("consent: Config.Path or Config.Backend is required")
		}
		var err error
		if b, err = OpenSQLite(ctx, cfg.Path); err != nil {
			return nil, err
		}
	}
	c := &Consent{b: b, cfg: withDefaults(cfg), revoked: map[string]bool{}, changed: make(chan struct{})}
	if err := c.Reload(ctx); err != nil {
		b.Close()
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

// Reload reads the revoked list again (Revoked answers from this copy).
func (c *Consent) Reload(ctx context.Context) error {
	now := c.cfg.Now()
	list, err := c.RevokedList(ctx)
	if err != nil {
		return err
	}
	revoked := make(map[string]bool, len(list))
	for _, r := range list {
		revoked[r.Agent] = true
	}
	c.mu.Lock()
	c.revoked, c.loaded = revoked, now
	c.mu.Unlock()
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
	return c.b.Close()
}

// notify wakes the waiters. Call with c.mu held.
func (c *Consent) notify() {
	close(c.changed)
	c.changed = make(chan struct{})
}
