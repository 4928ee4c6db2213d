package peers

import (
	"context"
	"log/slog"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// LocalStore is the node's own relay as the syncer sees it (the embedded
// relay satisfies it in-process).
//
// Publish verifies and stores evt and tells live subscribers. A duplicate
// returns nil. A refusal is an error whose text starts with a NIP-01
// prefix ("invalid: ...", "blocked: ..."): the syncer skips that event.
// Any other error is an internal failure: the syncer stops the session and
// fetches the event again later.
//
// QuerySync returns the stored events matching filter, newest first, at
// most filter.Limit of them.
//
// Both must be safe for concurrent use.
type LocalStore interface {
	Publish(ctx context.Context, evt *nostr.Event) error
	QuerySync(ctx context.Context, filter nostr.Filter) ([]*nostr.Event, error)
}

// Config is what a Syncer needs. Zero durations and sizes take the
// defaults below.
type Config struct {
	// Peers are the relays to follow, ws:// or wss:// URLs.
	Peers []string
	// Local is the node's own relay.
	Local LocalStore
	// Interests returns what the local agents need from peers. It is read
	// when Run starts and on every Refresh. nil: pull nothing.
	Interests func() []nostr.Filter
	// Outbox returns the node's own events to push to every peer. It is
	// read when Run starts and on every Refresh. nil: push nothing.
	Outbox func() []nostr.Filter
	// Watermarks keeps each peer's progress; nil keeps it in memory only.
	Watermarks Watermarks
	// Logger receives structured logs; nil means slog.Default().
	Logger *slog.Logger
	// Backoff spaces reconnects to a peer that went away.
	Backoff Backoff

	// Overlap is subtracted from a watermark when resuming, so that
	// events of the same second (and small clock differences) are fetched
	// again rather than missed. Default 10 s.
	Overlap time.Duration
	// PageSize is the limit of each catch-up query; a full page means
	// "ask again for older events". It is lowered to the peer's NIP-11
	// max_limit when that is smaller. Default 500.
	PageSize int
	// DialTimeout bounds connecting and each catch-up query. Default 10 s.
	DialTimeout time.Duration
	// PublishTimeout bounds the wait for a peer's OK. Default 10 s.
	PublishTimeout time.Duration
	// SaveEvery is how often changed watermarks are saved while a session
	// runs (they are also saved when a catch-up completes and when a
	// session ends). Default 1 s.
	SaveEvery time.Duration
	// QueueSize is the number of notified events waiting to be pushed to
	// one peer; when it overflows the peer catches up from its watermark
	// instead. Default 1024.
	QueueSize int
	// SeenSize is the number of recently stored event ids remembered, so
	// that the copies of an event other peers deliver cost neither a
	// signature check nor a store lookup. Default DefaultSeenSize.
	SeenSize int
}

// Config defaults.
const (
	DefaultOverlap        = 10 * time.Second
	DefaultPageSize       = 500
	DefaultDialTimeout    = 10 * time.Second
	DefaultPublishTimeout = 10 * time.Second
	DefaultSaveEvery      = time.Second
	DefaultQueueSize      = 1024
)

func (c Config) withDefaults() Config {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Watermarks == nil {
		c.Watermarks = NewMemWatermarks()
	}
	if c.Interests == nil {
		c.Interests = func() []nostr.Filter { return nil }
	}
	if c.Outbox == nil {
		c.Outbox = func() []nostr.Filter { return nil }
	}
	c.Backoff = c.Backoff.OrDefault()
	orDuration(&c.Overlap, DefaultOverlap)
	orDuration(&c.DialTimeout, DefaultDialTimeout)
	orDuration(&c.PublishTimeout, DefaultPublishTimeout)
	orDuration(&c.SaveEvery, DefaultSaveEvery)
	orInt(&c.PageSize, DefaultPageSize)
	orInt(&c.QueueSize, DefaultQueueSize)
	orInt(&c.SeenSize, DefaultSeenSize)
	return c
}

func orDuration(v *time.Duration, def time.Duration) {
	if *v <= 0 {
		*v = def
	}
}

func orInt(v *int, def int) {
	if *v <= 0 {
		*v = def
	}
}
