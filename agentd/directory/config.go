package directory

import (
	"context"
	"log/slog"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// Source is where the directory reads events from: a store it can query and
// that tells it about every event it stores (*relay.Relay satisfies it).
// OnStored's fn runs on the storing goroutine and must not block: the
// directory only queues the event there.
type Source interface {
	QuerySync(ctx context.Context, filter nostr.Filter) ([]*nostr.Event, error)
	OnStored(fn func(*nostr.Event)) (remove func())
}

// Publisher stores a signed event (*relay.Relay satisfies it). It must
// return an error when the event is refused.
type Publisher interface {
	Publish(ctx context.Context, evt *nostr.Event) error
}

// TrustFunc returns how much evaluator's reviews of agent count, in 0..1
// (values outside are clamped, NaN counts 0). It is called with the
// directory's lock held: it must be quick and must not call the Directory.
type TrustFunc func(evaluator, agent string) float64

// Config configures a Directory. Only Source is required.
type Config struct {
	Source Source
	// Publisher publishes registrations, unregistrations and evaluations.
	// nil: Source, when it also implements Publisher; else those calls
	// record locally only (Evaluate fails with ErrNoPublisher).
	Publisher Publisher
	// Trust weighs each evaluator's reviews; nil: DefaultTrust over Allowlist
	// (1 for the agent's verified owner and allowlisted keys, 0.5 otherwise).
	Trust TrustFunc
	// Allowlist holds hex pubkeys whose reviews weigh 1 under the default trust.
	Allowlist []string
	// HeartbeatTTL: an agent whose latest heartbeat is older is unavailable.
	// 0: DefaultHeartbeatTTL.
	HeartbeatTTL time.Duration
	// ProofWindow bounds how far a registration proof's created_at may be
	// from now, either way. 0: DefaultProofWindow.
	ProofWindow time.Duration
	// Weights of the ranking; the zero value means DefaultWeights.
	Weights Weights
	// Local reports whether an agent runs on this node (Agent.Local); nil: none.
	Local func(agent string) bool
	// Registrations keeps registrations and claims beyond events; nil:
	// memory only (a restart forgets them).
	Registrations Registrations
	// Now is the clock; nil: time.Now.
	Now func() time.Time
	// Logger; nil: slog.Default().
	Logger *slog.Logger
}

// Defaults.
const (
	DefaultHeartbeatTTL = 90 * time.Second // three 30 s heartbeat intervals
	DefaultProofWindow  = 5 * time.Minute
	DefaultLimit        = 100 // Search results when Query.Limit is 0
	// UntrustedWeight is the default trust of an evaluator who is neither the
	// agent's verified owner nor on the allowlist.
	UntrustedWeight = 0.5
)

// Weights are the ranking's coefficients (docs/DIRECTORY.md#ranking).
type Weights struct {
	Quality float64 // × score/10
	Cost    float64 // × (1 − cost/max cost among the matches)
	Load    float64 // × (1 − load/capacity)
}

// DefaultWeights favour quality, then cost and free capacity equally.
var DefaultWeights = Weights{Quality: 0.6, Cost: 0.2, Load: 0.2}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	if c.Publisher == nil {
		c.Publisher, _ = c.Source.(Publisher)
	}
	if c.HeartbeatTTL <= 0 {
		c.HeartbeatTTL = DefaultHeartbeatTTL
	}
	if c.ProofWindow <= 0 {
		c.ProofWindow = DefaultProofWindow
	}
	if c.Weights == (Weights{}) {
		c.Weights = DefaultWeights
	}
	if c.Local == nil {
		c.Local = func(string) bool { return false }
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}
