package registry

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"

	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/relayclient"
	"github.com/nbd-wtf/go-nostr"
)

// Source is where the registry reads packages: the embedded relay
// (*relay.Relay) or any client that answers NIP-01 filters.
type Source interface {
	QuerySync(ctx context.Context, filter nostr.Filter) ([]*nostr.Event, error)
}

// Option configures a Registry.
type Option func(*Registry)

// WithPreferredAuthors sets the node's preferred authors (hex or npub;
// anything else is ignored), in order: when two authors publish one name,
// the first of these who has a matching version wins (docs/REGISTRY.md).
func WithPreferredAuthors(pubkeys ...string) Option {
	return func(r *Registry) {
		r.preferred = nil
		for _, pk := range pubkeys {
			if hex, err := NormalizeAuthor(pk); err == nil && hex != "" {
				r.preferred = append(r.preferred, hex)
			}
		}
	}
}

// WithSeenLog keeps the order in which this node first saw each (author,
// name) in l (default: in memory only), for the resolution rule "first
// seen by this node" across restarts. The caller closes l.
func WithSeenLog(l *SeenLog) Option {
	return func(r *Registry) { r.seen = l }
}

// WithLogger sets where refused events are logged (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(r *Registry) { r.log = l }
}

// Registry resolves and searches published packages. Its index is filled
// by Load (or lazily by the first Resolve or Search) and kept current by
// Index. It is safe for concurrent use.
type Registry struct {
	src       Source
	preferred []string
	seen      *SeenLog
	log       *slog.Logger
	parsed    sync.Map // event id -> *acp.Package, filled by Resolve
	// relaySearch ranks searches with the source's NIP-50 (WithRelaySearch).
	relaySearch bool

	loadMu sync.Mutex // serialises Load
	mu     sync.RWMutex
	loaded bool
	idx    *index
}

// New returns a registry over src. It starts nothing and reads nothing.
func New(src Source, opts ...Option) *Registry {
	r := &Registry{src: src, log: slog.Default(), idx: newIndex(), seen: memorySeen()}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Load reads every kind-30199 event from the source into the index
// (keeping what Index added meanwhile). Events that do not parse are
// skipped (and logged at debug level).
func (r *Registry) Load(ctx context.Context) error {
	r.loadMu.Lock()
	defer r.loadMu.Unlock()
	batch := r.seen.reserve() // before the query: what Index sees meanwhile comes after
	evts, err := r.readAll(ctx)
	if err != nil {
		return fmt.Errorf("registry: load: %w", err)
	}
	idx := newIndex()
	for _, e := range r.entriesOf(evts) {
		if e != nil {
			idx.add(e)
			r.noteSeen(e, batch)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.idx.byAddr { // indexed while the query ran
		idx.add(e)
	}
	r.idx, r.loaded = idx, true
	return nil
}

// loadPage is the page of one Load query; relays cap a limit at their
// own maximum (the embedded relay's is 5,000).
const loadPage = 5000

// readAll reads every kind-30199 event of the source, newest first
// (relayclient.Walk: a second holding more than a page is read through,
// up to ten pages of it, then the older seconds).
func (r *Registry) readAll(ctx context.Context) ([]*nostr.Event, error) {
	evts, _, err := relayclient.All(ctx, r.src, nostr.Filter{Kinds: []int{events.KindCapability}}, relayclient.Paging{Page: loadPage,
		OnSkip: func(second nostr.Timestamp, read int, why string) error {
			r.log.Warn("registry: load leaves the rest of a crowded second", "second", second, "read", read, "why", why)
			return nil
		}})
	return evts, err
}

// Index adds one stored event: a kind-30199 package, or a kind-5 deletion
// that removes its author's packages it names (e or a tags). Other kinds
// are ignored. It is quick: its only I/O is one short append to the seen
// log for an (author, name) not seen before. Wire it with
// relay.OnStored(reg.Index).
func (r *Registry) Index(evt *nostr.Event) {
	switch evt.Kind {
	case events.KindCapability:
		if e := r.entryOf(evt); e != nil {
			r.noteSeen(e, 0)
			r.mu.Lock()
			r.idx.add(e)
			r.mu.Unlock()
		}
	case nostr.KindDeletion:
		r.mu.Lock()
		r.idx.deleteBy(evt)
		r.mu.Unlock()
	}
}

// noteSeen records e's (author, name) in the seen log at seq (0: now).
func (r *Registry) noteSeen(e *Entry, seq uint64) {
	if _, err := r.seen.note(e.Author, e.Name, seq); err != nil {
		r.log.Warn("registry: seen log not written", "err", err)
	}
}

// entriesOf checks and summarizes evts on every core (signature checks
// and YAML decoding dominate a Load); nil where an event is not a package.
func (r *Registry) entriesOf(evts []*nostr.Event) []*Entry {
	out := make([]*Entry, len(evts))
	workers := min(runtime.GOMAXPROCS(0), max(len(evts)/64, 1))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() { // owned: Load waits for it below
			defer wg.Done()
			for i := w; i < len(evts); i += workers {
				out[i] = r.entryOf(evts[i])
			}
		}()
	}
	wg.Wait()
	return out
}

// entryOf checks and summarizes evt; nil when it is not a package.
func (r *Registry) entryOf(evt *nostr.Event) *Entry {
	c, m, tools, err := summarize(evt)
	if err != nil {
		r.log.Debug("registry: skipped event", "id", evt.ID, "err", err)
		return nil
	}
	return newEntry(evt, c, m, tools)
}

// withPackage returns e with its fully parsed package (cached per event).
func (r *Registry) withPackage(e *Entry) (*Entry, error) {
	if p, ok := r.parsed.Load(e.EventID); ok {
		e.Package = p.(*acp.Package)
		return e, nil
	}
	p, err := fromEvent(e.Event)
	if err != nil {
		return nil, fmt.Errorf("%w: %s by %s: %w", ErrInvalid, e.URI, e.Author, err)
	}
	r.parsed.Store(e.EventID, p)
	e.Package = p
	return e, nil
}

// ensureLoaded loads the index on first use.
func (r *Registry) ensureLoaded(ctx context.Context) error {
	r.mu.RLock()
	loaded := r.loaded
	r.mu.RUnlock()
	if loaded {
		return nil
	}
	return r.Load(ctx)
}

// Len returns how many package versions the index holds.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.idx.byAddr)
}
