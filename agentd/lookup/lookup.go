package lookup

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/netguard"
	"github.com/agentnode/agentnode/internal/relayclient"
)

// Store is the local relay (*relay.Relay).
type Store interface {
	QuerySync(ctx context.Context, filter nostr.Filter) ([]*nostr.Event, error)
	Publish(ctx context.Context, evt *nostr.Event) error
}

// Config is what a Lookup needs; zero fields take the defaults in brackets.
type Config struct {
	Local Store
	// Peers returns the node's peer relays (asked first); nil: none.
	Peers func() []string
	// Self is this node's own URL(s), never asked.
	Self   []string
	Logger *slog.Logger

	Timeout       time.Duration // connect + answer, per relay [3 s]
	MaxRelays     int           // relays asked per lookup [6]
	MaxInflight   int           // lookups at once; beyond, the local answer stands [8]
	PerRelayRate  int           // queries per minute to one relay [60]
	GlobalRate    int           // queries per minute to all relays together [300]
	NegativeTTL   time.Duration // "not found" is remembered this long [2 min]
	MaxRemembered int           // entries of the negative cache and of the source map [10,000]

	// Network guards the dials of relays strangers name (hints, pointers,
	// NIP-65 relay lists, comment roots): its zero value refuses
	// loopback, private and link-local addresses (the node's own
	// network), checked at dial time. The Peers are the operator's and
	// are dialled whatever their address.
	Network netguard.Policy
}

func (c Config) withDefaults() Config {
	c.Timeout = cmp.Or(c.Timeout, 3*time.Second)
	c.MaxRelays = cmp.Or(c.MaxRelays, 6)
	c.MaxInflight = cmp.Or(c.MaxInflight, 8)
	c.PerRelayRate = cmp.Or(c.PerRelayRate, 60)
	c.GlobalRate = cmp.Or(c.GlobalRate, 300)
	c.NegativeTTL = cmp.Or(c.NegativeTTL, 2*time.Minute)
	c.MaxRemembered = cmp.Or(c.MaxRemembered, 10_000)
	if c.Peers == nil {
		c.Peers = func() []string { return nil }
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Errors of a lookup.
var (
	// ErrBusy: MaxInflight lookups are running; nothing was asked.
	ErrBusy = errors.New("lookup: too many lookups in flight")
	// ErrNotFound: no relay asked had a matching event (or the negative
	// cache says so).
	ErrNotFound = errors.New("lookup: not found")
)

// Lookup asks other relays for events. Safe for concurrent use.
type Lookup struct {
	cfg      Config
	inflight chan struct{}
	budget   *budget // per relay
	global   *budget // all relays
	missing  *memory // filter key -> until when "not found" holds
	sources  *memory // event id -> relay URL it was fetched from
	hints    *memory // pubkey -> relay URL a stored "p" tag names for it
	now      func() time.Time
}

// New returns a Lookup; it starts nothing.
func New(cfg Config) *Lookup {
	cfg = cfg.withDefaults()
	return &Lookup{cfg: cfg, inflight: make(chan struct{}, cfg.MaxInflight),
		budget: newBudget(cfg.PerRelayRate, cfg.MaxRemembered), global: newBudget(cfg.GlobalRate, 1),
		missing: newMemory(cfg.MaxRemembered), sources: newMemory(cfg.MaxRemembered), hints: newMemory(cfg.MaxRemembered),
		now: time.Now}
}

// Source is the relay the event id was fetched from by a lookup, or "" if
// no lookup fetched it (it was local) or it is no longer remembered.
func (l *Lookup) Source(id string) string {
	s, _ := l.sources.get(id, l.now())
	return s
}

// Find looks filter up on the peers, on author's NIP-65 write relays
// (author may be "") and on hints, stores every valid match locally and
// returns them.
func (l *Lookup) Find(ctx context.Context, filter nostr.Filter, author string, hints []string) ([]*nostr.Event, error) {
	key := filter.String()
	if _, miss := l.missing.get(key, l.now()); miss {
		return nil, ErrNotFound
	}
	select {
	case l.inflight <- struct{}{}:
		defer func() { <-l.inflight }()
	default:
		return nil, ErrBusy
	}
	relays := l.relays(ctx, author, hints)
	found, asked := l.ask(ctx, relays, filter)
	if len(found) == 0 {
		if asked > 0 { // nothing asked (budgets spent): nothing learnt
			l.missing.put(key, "", l.now().Add(l.cfg.NegativeTTL))
		}
		return nil, ErrNotFound
	}
	return l.store(ctx, found), nil
}

// hit is an event and the relay that served it.
type hit struct {
	evt *nostr.Event
	url string
}

// ask queries relays side by side, each within Timeout and its budget,
// and returns the valid matches, one per id, and how many relays it asked.
func (l *Lookup) ask(ctx context.Context, relays []string, filter nostr.Filter) (out []hit, asked int) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, url := range relays {
		if !l.global.take("*", l.now()) {
			break
		}
		if !l.budget.take(url, l.now()) {
			continue
		}
		asked++
		wg.Go(func() {
			evts := l.query(ctx, url, filter)
			mu.Lock()
			defer mu.Unlock()
			for _, e := range evts {
				if filter.Matches(e) && !slices.ContainsFunc(out, func(h hit) bool { return h.evt.ID == e.ID }) {
					out = append(out, hit{e, url})
				}
			}
		})
	}
	wg.Wait()
	return out, asked
}

// query asks one relay; failures are logged and yield nothing.
func (l *Lookup) query(ctx context.Context, url string, filter nostr.Filter) []*nostr.Event {
	ctx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
	defer cancel()
	conn, err := relayclient.Dial(ctx, url, relayclient.Options{Verify: true, Guard: l.guard(url)})
	var blocked *netguard.BlockedError
	switch {
	case errors.As(err, &blocked):
		l.cfg.Logger.Info("lookup: relay not dialled: not a public address", "relay", url, "err", err)
		return nil
	case err != nil:
		l.cfg.Logger.Debug("lookup: relay unreachable", "relay", url, "err", err)
		return nil
	}
	defer conn.Close()
	filter.Limit = cmp.Or(filter.Limit, 20)
	evts, err := conn.Query(ctx, nostr.Filters{filter})
	if err != nil {
		l.cfg.Logger.Debug("lookup: query failed", "relay", url, "err", err)
	}
	return evts
}

// guard is the policy a dial of url passes: none for a peer (the
// operator named it), else Config.Network.
func (l *Lookup) guard(url string) *netguard.Policy {
	if slices.ContainsFunc(l.cfg.Peers(), func(p string) bool { return nostr.NormalizeURL(p) == nostr.NormalizeURL(url) }) {
		return nil
	}
	g := l.cfg.Network
	g.Label = cmp.Or(g.Label, "lookup")
	return &g
}

// store publishes the hits locally (a refusal drops the event) and
// remembers where each came from.
func (l *Lookup) store(ctx context.Context, hits []hit) []*nostr.Event {
	var out []*nostr.Event
	for _, h := range hits {
		if err := l.cfg.Local.Publish(ctx, h.evt); err != nil {
			l.cfg.Logger.Debug("lookup: found event refused locally", "id", h.evt.ID, "relay", h.url, "err", err)
			continue
		}
		l.sources.put(h.evt.ID, h.url, l.now().Add(24*time.Hour))
		out = append(out, h.evt)
	}
	return out
}
