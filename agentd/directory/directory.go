package directory

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agentnode/agentnode/events"
	"github.com/nbd-wtf/go-nostr"
)

// Directory is the live agent index. Its methods are safe for concurrent
// use. New starts nothing; Run loads what the Source holds, is Ready, and
// follows the Source until ctx ends. The index stays readable after.
type Directory struct {
	cfg   Config
	log   *slog.Logger
	allow map[string]bool

	mu         sync.RWMutex
	agents     map[string]*entry                        // by agent pubkey
	defs       map[string]*Definition                   // by event id
	defList    []*Definition                            // every definition, in defOrder
	claims     map[string]*ownerClaims                  // latest per owner
	reviews    map[string]map[string]*events.Evaluation // agent -> evaluator -> latest
	reviewByID map[string]*events.Evaluation            // for deletions
	byOwner    map[string]map[string]bool               // owner -> agents whose profile names it
	byDef      map[string]map[string]bool               // definition id -> agents running it
	byCap      map[string]map[string]*entry             // lower-case capability -> agents offering it
	stored     map[string]bool                          // registered with proof, per Config.Registrations (last read)
	checks     []claimCheck                             // owners' claims to read from the store (ingest runs them)

	queue   inbox
	stats   counters
	running atomic.Bool   // a Run is under way
	ready   chan struct{} // closed once the first Run has loaded
	loaded  sync.Once
}

// counters are the ingest figures Stats reports.
type counters struct {
	ingested, ignored atomic.Uint64
}

// Stats are ingest counters: events applied, and events ignored (invalid or
// of no interest).
type Stats struct {
	Ingested uint64 `json:"ingested"`
	Ignored  uint64 `json:"ignored"`
	Agents   int    `json:"agents"`
}

// New returns a Directory for cfg (Source is required by Run). It starts
// nothing.
func New(cfg Config) *Directory {
	cfg = cfg.withDefaults()
	d := &Directory{cfg: cfg, log: cfg.Logger, allow: map[string]bool{}}
	for _, pk := range cfg.Allowlist {
		if hex, err := events.ParsePubKey(pk); err == nil {
			d.allow[hex] = true
		}
	}
	if cfg.Trust == nil {
		d.cfg.Trust = d.DefaultTrust
	}
	d.reset()
	d.queue.signal = make(chan struct{}, 1)
	d.ready = make(chan struct{})
	return d
}

// reset empties the index.
func (d *Directory) reset() {
	d.agents = map[string]*entry{}
	d.defs = map[string]*Definition{}
	d.defList = nil
	d.claims = map[string]*ownerClaims{}
	d.reviews = map[string]map[string]*events.Evaluation{}
	d.reviewByID = map[string]*events.Evaluation{}
	d.byOwner = map[string]map[string]bool{}
	d.byDef = map[string]map[string]bool{}
	d.byCap = map[string]map[string]*entry{}
}

// Run follows the Source (what it stores from now on is queued), loads
// what it already holds and the stored registrations, is Ready, then
// applies what it follows until ctx ends; then it stops following and
// returns nil. Run again later catches up from the Source; two Runs at
// once are refused (ErrAlreadyRunning).
func (d *Directory) Run(ctx context.Context) error {
	if d.cfg.Source == nil {
		return fmt.Errorf("directory: no source")
	}
	if !d.running.CompareAndSwap(false, true) {
		return ErrAlreadyRunning
	}
	defer d.running.Store(false)
	defer d.cfg.Source.OnStored(d.queue.push)()
	if err := d.load(ctx); err != nil {
		return err
	}
	if err := d.restore(ctx); err != nil {
		return fmt.Errorf("directory: restore registrations: %w", err)
	}
	d.log.Info("directory loaded", "agents", d.Stats().Agents, "definitions", d.DefinitionCount())
	d.loaded.Do(func() {
		// The first load read every event the directory indexes and kept
		// only summaries: give its garbage back now rather than let an
		// idle node hold it until the runtime's next cycle.
		debug.FreeOSMemory()
		close(d.ready)
	})
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-d.queue.signal:
			for _, evt := range d.queue.drain() {
				d.ingest(ctx, evt)
			}
		}
	}
}

// Ready is closed once Run has loaded what the Source held (the first
// time): the index answers from then on.
func (d *Directory) Ready() <-chan struct{} { return d.ready }

// Get returns the agent with hex pubkey (or npub) id; an id that names no
// proven agent may name an unverified registration (RegisterClaim), free-form
// ids included.
func (d *Directory) Get(id string) (Agent, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	var e *entry
	if hex, err := events.ParsePubKey(id); err == nil {
		e = d.agents[hex]
	}
	if e == nil || !e.known() {
		e = d.claimed(id) // a free-form id maps to its unverified registration
	}
	if e == nil || !e.known() {
		return Agent{}, false
	}
	return e.snapshot(d.cfg.Now(), d.cfg.HeartbeatTTL), true
}

// All returns every agent, available or not, sorted by id.
func (d *Directory) All() []Agent {
	now := d.cfg.Now()
	d.mu.RLock()
	out := make([]Agent, 0, len(d.agents))
	for _, e := range d.agents {
		if e.known() {
			out = append(out, e.snapshot(now, d.cfg.HeartbeatTTL))
		}
	}
	d.mu.RUnlock()
	slices.SortFunc(out, func(a, b Agent) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Stats returns the ingest counters and the number of agents listed.
func (d *Directory) Stats() Stats {
	d.mu.RLock()
	n := 0
	for _, e := range d.agents {
		if e.known() {
			n++
		}
	}
	d.mu.RUnlock()
	return Stats{Ingested: d.stats.ingested.Load(), Ignored: d.stats.ignored.Load(), Agents: n}
}

// inbox is an unbounded queue: push never blocks the storing goroutine.
type inbox struct {
	mu      sync.Mutex
	pending []*nostr.Event
	signal  chan struct{}
}

// push queues evt if it is of a kind the directory reads.
func (q *inbox) push(evt *nostr.Event) {
	if !relevant(evt) {
		return
	}
	q.mu.Lock()
	q.pending = append(q.pending, evt)
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// drain takes everything queued.
func (q *inbox) drain() []*nostr.Event {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.pending
	q.pending = nil
	return out
}
