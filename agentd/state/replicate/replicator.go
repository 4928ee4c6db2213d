package replicate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentnode/agentnode/agentd/state/crdt"
	"github.com/agentnode/agentnode/agentd/state/schema"
	"github.com/agentnode/agentnode/agentd/state/store"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/backoff"
)

// Sentinel errors.
var (
	// ErrConfig is returned by New for an unusable Config.
	ErrConfig = errors.New("replicate: bad config")
	// ErrBadEvent marks a received event that is malformed: wrong kind, bad
	// id or signature, missing tags, or envelopes that do not belong to
	// the batch its tags name.
	ErrBadEvent = errors.New("replicate: bad op event")
	// ErrUndecryptable marks an event addressed to us that NIP-44 cannot open.
	ErrUndecryptable = errors.New("replicate: cannot decrypt op event")
	// ErrNotForUs marks an encrypted event addressed to other readers.
	ErrNotForUs = errors.New("replicate: op event not addressed to this key")
	// ErrUntrusted marks an event whose author may not write the owner's state.
	ErrUntrusted = errors.New("replicate: author may not write this owner's state")
)

// Store is what the replicator needs of the state store; *store.Store is one.
type Store interface {
	Namespaces(ctx context.Context) ([]string, error)
	OpsSince(ctx context.Context, prefix string, after int64, limit int) ([]store.Envelope, error)
	ApplyRemote(ctx context.Context, envs []store.Envelope) (int, error)
	Replica() crdt.ReplicaID
	Changed() <-chan struct{}
	Digests(ctx context.Context, prefix string) ([]store.DocDigest, error)
	DocOps(ctx context.Context, sch *schema.Schema, id string) ([]store.Envelope, error)
	LoadSetting(ctx context.Context, key string) (string, error)
	SaveSetting(ctx context.Context, key, value string) error
}

var _ Store = (*store.Store)(nil)

// Defaults for Config.
const (
	DefaultPollInterval  = 2 * time.Second
	DefaultRetryMin      = 250 * time.Millisecond
	DefaultRetryMax      = 30 * time.Second
	DefaultResumeSlack   = 2 * time.Minute
	DefaultMaxBatchBytes = MaxSealedPlaintext
	DefaultPageSize      = 500
)

// Config configures a Replicator.
type Config struct {
	// SecretKey (hex or nsec) signs the op events, decrypts the ones
	// addressed to it and answers NIP-42 challenges: the agent's key.
	SecretKey string
	// Owner (hex) is whose state this replicator pushes: local ops of
	// documents with this owner. Ops of other owners are left to their
	// own replicators.
	Owner string
	// Directory names an owner's agents: the readers of shared state and
	// the keys (besides the owner) that may write the owner's state.
	Directory Directory
	// Schemas gives the visibility of local ops (Runtime.Schemas()).
	Schemas store.Resolver
	// Links are the relays to push to and pull from.
	Links []Link
	// Follow are more authors whose public op events are pulled (agents of
	// other owners); the owner's own agents (per Directory) and this key
	// are always followed. Their ops apply only if the author may write
	// the documents' owner's state, like any other.
	Follow []string
	// Scopes, if set, limits replication (both ways) to these memory scopes.
	Scopes []string

	PollInterval  time.Duration // op-log scan without a commit signal (other processes); 0 = DefaultPollInterval
	RetryMin      time.Duration // first back-off after a failure; 0 = DefaultRetryMin
	RetryMax      time.Duration // longest back-off; 0 = DefaultRetryMax
	ResumeSlack   time.Duration // a pull resumes this long before its cursor (clock skew); 0 = DefaultResumeSlack
	MaxBatchBytes int           // plaintext bytes per event; 0 = DefaultMaxBatchBytes, at most MaxSealedPlaintext
	PageSize      int           // ops read per OpsSince call, events per catch-up query; 0 = DefaultPageSize
	// AntiEntropyInterval is how often digests go to the owner's agents
	// (antientropy.go); 0 = DefaultAntiEntropy, negative = never.
	AntiEntropyInterval time.Duration
	Logger              *slog.Logger // nil = slog.Default()
}

func (c Config) withDefaults() Config {
	pick := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	pick(&c.PollInterval, DefaultPollInterval)
	pick(&c.RetryMin, DefaultRetryMin)
	pick(&c.RetryMax, DefaultRetryMax)
	pick(&c.ResumeSlack, DefaultResumeSlack)
	if c.AntiEntropyInterval == 0 {
		c.AntiEntropyInterval = DefaultAntiEntropy
	}
	if c.MaxBatchBytes <= 0 || c.MaxBatchBytes > MaxSealedPlaintext {
		c.MaxBatchBytes = DefaultMaxBatchBytes
	}
	if c.PageSize <= 0 {
		c.PageSize = DefaultPageSize
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Stats count what a Replicator did since New.
type Stats struct {
	Published int64 // events accepted by a relay
	Received  int64 // distinct op events handled
	Applied   int64 // envelopes new to the store
	Skipped   int64 // events dropped: malformed, undecryptable, untrusted, not for us, refused

	DigestsSent     int64 // anti-entropy digests published (one per peer and round)
	DigestsReceived int64 // digests of trusted peers compared
	RepairEvents    int64 // repair events published
	RepairOps       int64 // envelopes carried by them
	// Lacking is, at the last digest received, how many of the peer's
	// buckets hold documents this replica has none of: non-zero means
	// this replica knows it lacks state and waits for the peer's repair.
	Lacking int64
}

// Replicator ships the store's local ops to relays as kind-4290 events and
// applies the ops other replicas publish for its key. It is safe for
// concurrent use; New starts nothing, Run does the work.
type Replicator struct {
	st   Store
	cfg  Config
	keys *keyring
	log  *slog.Logger

	seen    seenSet
	chunks  chunks // parts of ops too large for one event, until all have come
	repairs chan repairReq
	stats   struct {
		published, received, applied, skipped       atomic.Int64
		digests, digestsIn, repairEvents, repairOps atomic.Int64
		lacking                                     atomic.Int64
	}
}

// New checks cfg and returns a Replicator over st.
func New(st Store, cfg Config) (*Replicator, error) {
	keys, err := newKeyring(cfg.SecretKey)
	if err != nil {
		return nil, err
	}
	owner, err := events.ParsePubKey(cfg.Owner)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: owner: %w", ErrConfig, err)
	case cfg.Directory == nil || cfg.Schemas == nil:
		return nil, fmt.Errorf("%w: Directory and Schemas are required", ErrConfig)
	case len(cfg.Links) == 0:
		return nil, fmt.Errorf("%w: no links", ErrConfig)
	}
	names := map[string]bool{}
	for _, l := range cfg.Links {
		if l.Name == "" || names[l.Name] {
			return nil, fmt.Errorf("%w: link names must be unique and non-empty", ErrConfig)
		}
		names[l.Name] = true
	}
	cfg.Owner = owner
	cfg = cfg.withDefaults()
	return &Replicator{st: st, cfg: cfg, keys: keys, log: cfg.Logger.With("replicator", keys.pk[:12]),
		repairs: make(chan repairReq, repairQueue)}, nil
}

// PublicKey is the replicator's key: its events' author and p tag.
func (r *Replicator) PublicKey() string { return r.keys.pk }

// Stats returns the counters.
func (r *Replicator) Stats() Stats {
	return Stats{Published: r.stats.published.Load(), Received: r.stats.received.Load(),
		Applied: r.stats.applied.Load(), Skipped: r.stats.skipped.Load(),
		DigestsSent: r.stats.digests.Load(), DigestsReceived: r.stats.digestsIn.Load(),
		RepairEvents: r.stats.repairEvents.Load(), RepairOps: r.stats.repairOps.Load(),
		Lacking: r.stats.lacking.Load()}
}

// Run pushes and pulls on every link until ctx ends, then waits for its
// goroutines (one pusher and one puller per link) and returns nil.
// Failures (a relay down, a refused event, a bad event received) are
// logged and retried with back-off or skipped; they never end Run.
func (r *Replicator) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, l := range r.cfg.Links {
		if l.Publisher != nil {
			wg.Go(func() { r.pusher(ctx, l) })
		}
		if l.Subscriber != nil {
			wg.Go(func() { r.puller(ctx, l) })
		}
	}
	if r.cfg.AntiEntropyInterval > 0 {
		wg.Go(func() { r.antiEntropy(ctx) })
		wg.Go(func() { r.repairer(ctx) })
	}
	wg.Wait()
	return nil
}

// inScope reports whether a memory scope is replicated.
func (r *Replicator) inScope(scope string) bool {
	return len(r.cfg.Scopes) == 0 || slices.Contains(r.cfg.Scopes, scope)
}

// cursorKey names a persisted cursor: per key, so that replicators of
// several agents on one store keep their own.
func (r *Replicator) cursorKey(parts ...string) string {
	k := "replicate:" + r.keys.pk
	for _, p := range parts {
		k += ":" + p
	}
	return k
}

// retry is the back-off after a failed pull or push: RetryMin, doubling
// up to RetryMax, jittered.
func (r *Replicator) retry() backoff.Backoff {
	return backoff.Backoff{Min: r.cfg.RetryMin, Max: r.cfg.RetryMax}
}

// sleep waits d or until ctx ends; false if ctx ended.
var sleep = backoff.Sleep

// seenSet remembers recently handled event ids (two generations of at
// most seenGeneration each), so an event from several relays is opened
// once.
type seenSet struct {
	mu        sync.Mutex
	cur, prev map[string]struct{}
}

const seenGeneration = 8192

// add records id; false if it was already there.
func (s *seenSet) add(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.cur[id]; ok {
		return false
	}
	if _, ok := s.prev[id]; ok {
		return false
	}
	if s.cur == nil || len(s.cur) >= seenGeneration {
		s.prev, s.cur = s.cur, map[string]struct{}{}
	}
	s.cur[id] = struct{}{}
	return true
}

// forget drops id, so the event is handled again when it comes back
// (after a failure that was not the event's fault).
func (s *seenSet) forget(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.cur, id)
	delete(s.prev, id)
}
