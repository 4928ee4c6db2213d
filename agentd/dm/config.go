package dm

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/strangers"
)

// Source is where gift wraps come from: the embedded relay in-process
// (*relay.Relay satisfies it). It is trusted: events it hands over are
// stored, so their ids and signatures were checked.
type Source interface {
	// OnStored calls fn with every stored event; fn must not block.
	OnStored(fn func(*nostr.Event)) (remove func())
	// QuerySync returns stored events matching filter, newest first.
	QuerySync(ctx context.Context, filter nostr.Filter) ([]*nostr.Event, error)
}

// Responder answers one message to an agent. from is the sender's pubkey
// (hex) and is also the conversation id. It may be called concurrently
// (up to Config.MaxConcurrent + StrangerWorkers calls) and must honour ctx.
type Responder interface {
	Respond(ctx context.Context, agent, from, text string) (string, error)
}

// ResponderFunc adapts a function to Responder.
type ResponderFunc func(ctx context.Context, agent, from, text string) (string, error)

// Respond calls f.
func (f ResponderFunc) Respond(ctx context.Context, agent, from, text string) (string, error) {
	return f(ctx, agent, from, text)
}

// Gate decides what a sender's message may cost before the Responder is
// asked (*strangers.Budget): known senders skip it, strangers draw on a
// budget. It may read (a sibling's owner link) and must honour ctx.
type Gate interface {
	Admit(ctx context.Context, agent, from string) strangers.Verdict
}

// Defaults of the optional Config fields.
const (
	DefaultUnavailableText = "Sorry, I cannot answer right now: the node running me has no chat model configured, or it did not answer. Please try again later."
	DefaultRateLimitedText = "You are sending messages faster than I can answer; I will skip some. Please slow down."
	DefaultOverBudgetText  = "I answer people I do not know only a few times in a while; I will skip your next messages for some minutes. Please try again later."
	DefaultMaxConcurrent   = 4
	DefaultRespondTimeout  = 2 * time.Minute
	// DefaultCatchUpWindow covers NIP-59's randomised wrap timestamps (up to
	// two days in the past) plus an hour of slack.
	DefaultCatchUpWindow = 49 * time.Hour
	DefaultQueueSize     = 4096
	// DefaultUnwrappers: goroutines opening wraps as they are stored.
	DefaultUnwrappers = 2
	// strangerQueue bounds the admitted strangers' messages waiting for a
	// worker (the budget admits few; beyond it they are dropped).
	strangerQueue = 256
	// droppedMemory is how many wraps the Gate dropped are remembered (in
	// memory), so the catch-up does not look at them again.
	droppedMemory = 65_536
)

// DefaultRateLimit: a burst of 5 messages, then one every 6 seconds, per sender.
var DefaultRateLimit = RateLimit{Burst: 5, Every: 6 * time.Second}

// RateLimit is a token bucket per sender: Burst messages at once, then one
// per Every. A zero RateLimit takes DefaultRateLimit; Burst < 0 disables it.
type RateLimit struct {
	Burst int
	Every time.Duration
}

// Config is everything a Service needs. Source, Publish, Agents, Keys and
// Responder are required.
type Config struct {
	Source  Source
	Publish func(ctx context.Context, evt *nostr.Event) error
	// Agents returns the local agents' pubkeys (hex); called per event.
	Agents func() []string
	// Keys returns an agent's secret key (hex).
	Keys      func(ctx context.Context, pubkey string) (sk string, err error)
	Responder Responder

	// StatePath is the JSON file of processed wrap ids and the watermark
	// (created 0600, its directory 0700); "" keeps them in memory only, so
	// a restart may answer a DM again.
	StatePath string
	// Ledger, when set, replaces the file at StatePath (a database shared
	// by instances: agentd/agentpg); its window should be CatchUpWindow.
	Ledger Ledger
	// RelayURLs go into every agent's kind 10050 DM relay list at Run's start;
	// empty: no list is published.
	RelayURLs []string

	// Gate admits each sender's message (the strangers' budget); nil:
	// every sender is known (only RateLimit applies).
	Gate Gate

	UnavailableText string        // reply when the Responder fails
	RateLimitedText string        // sent once when a sender runs out of tokens
	OverBudgetText  string        // sent once when a stranger's own budget runs dry (strangers.Notify)
	RateLimit       RateLimit     // per-sender token bucket
	MaxConcurrent   int           // Responder calls at once for known senders
	StrangerWorkers int           // and, besides those, for strangers (default MaxConcurrent/2, at least 1)
	RespondTimeout  time.Duration // bound on one Responder call
	CatchUpWindow   time.Duration // how far before the watermark Run looks
	// QueueSize bounds the stored wraps waiting to be opened (beyond it the
	// oldest is dropped: caught up at the next start) and the known
	// senders' messages waiting for a worker.
	QueueSize  int
	Unwrappers int // goroutines opening wraps (default DefaultUnwrappers)
	Logger     *slog.Logger
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
}

// withDefaults validates c and fills its optional fields.
func (c Config) withDefaults() (Config, error) {
	switch {
	case c.Source == nil:
		return c, fmt.Errorf("%w: Source is nil", ErrConfig)
	case c.Publish == nil:
		return c, fmt.Errorf("%w: Publish is nil", ErrConfig)
	case c.Agents == nil:
		return c, fmt.Errorf("%w: Agents is nil", ErrConfig)
	case c.Keys == nil:
		return c, fmt.Errorf("%w: Keys is nil", ErrConfig)
	case c.Responder == nil:
		return c, fmt.Errorf("%w: Responder is nil", ErrConfig)
	}
	c.UnavailableText = or(c.UnavailableText, DefaultUnavailableText)
	c.MaxConcurrent = or(c.MaxConcurrent, DefaultMaxConcurrent)
	c.RateLimitedText = or(c.RateLimitedText, DefaultRateLimitedText)
	c.OverBudgetText = or(c.OverBudgetText, DefaultOverBudgetText)
	c.StrangerWorkers = or(c.StrangerWorkers, max(1, c.MaxConcurrent/2))
	c.Unwrappers = or(c.Unwrappers, DefaultUnwrappers)
	c.RespondTimeout = or(c.RespondTimeout, DefaultRespondTimeout)
	c.CatchUpWindow = or(c.CatchUpWindow, DefaultCatchUpWindow)
	c.QueueSize = or(c.QueueSize, DefaultQueueSize)
	c.RateLimit = or(c.RateLimit, DefaultRateLimit)
	c.Logger = or(c.Logger, slog.Default())
	if c.Now == nil {
		c.Now = time.Now
	}
	return c, nil
}

// or returns v unless it is the zero value, else def.
func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}
