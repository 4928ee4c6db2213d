package strangers

import (
	"context"
	"fmt"
	"time"
)

// Rate is a token bucket: Burst messages at once, then one per Every. A
// negative Burst turns the bucket off (it always has a token).
type Rate struct {
	Burst int
	Every time.Duration
}

// off reports whether the bucket admits everything.
func (r Rate) off() bool { return r.Burst < 0 }

// The documented defaults (docs/DM.md, "Strangers").
var (
	DefaultPerSender = Rate{Burst: 3, Every: 10 * time.Minute}
	DefaultPerAgent  = Rate{Burst: 20, Every: time.Minute}
	DefaultGlobal    = Rate{Burst: 100, Every: 10 * time.Second}
)

// DefaultMaxEntries caps each map of buckets (senders, agents).
const DefaultMaxEntries = 10_000

// Config configures a Budget; zero fields take the defaults.
type Config struct {
	PerSender, PerAgent, Global Rate
	// Known reports whether from is known to agent (its owner, on an
	// allowlist, a verified sibling): known senders skip the budget. It
	// may read (a sibling's owner link) and must honour ctx. nil: nobody is.
	Known func(ctx context.Context, agent, from string) bool
	// MaxEntries caps each map of buckets (default DefaultMaxEntries).
	MaxEntries int
	// Now is the clock; nil: time.Now.
	Now func() time.Time
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	c.PerSender = orRate(c.PerSender, DefaultPerSender)
	c.PerAgent = orRate(c.PerAgent, DefaultPerAgent)
	c.Global = orRate(c.Global, DefaultGlobal)
	if c.MaxEntries <= 0 {
		c.MaxEntries = DefaultMaxEntries
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

func orRate(r, def Rate) Rate {
	if r == (Rate{}) {
		return def
	}
	return r
}

// Check reports a Rate that cannot work: a positive Burst with no Every
// (it would never refill), or a zero Burst with an Every (never a token).
func (r Rate) Check(name string) error {
	switch {
	case r == Rate{} || r.off():
		return nil
	case r.Every <= 0:
		return fmt.Errorf("%s: every must be positive", name)
	case r.Burst == 0:
		return fmt.Errorf("%s: burst must be positive (or negative: no limit)", name)
	}
	return nil
}
