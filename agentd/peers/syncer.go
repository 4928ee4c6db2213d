package peers

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/redact"
)

// Syncer follows a set of peer relays: it pulls what the local agents need
// into the local store and pushes the node's own events out. See doc.go.
type Syncer struct {
	cfg   Config
	log   *slog.Logger
	peers []*peer
	seen  *seenIDs // recently stored ids, shared by the peers (dedupe.go)

	planMu  sync.Mutex // serialises Refresh
	plan    atomic.Pointer[plan]
	running atomic.Bool
}

// New returns a Syncer for cfg. It starts nothing: call Run.
func New(cfg Config) *Syncer {
	cfg = cfg.withDefaults()
	s := &Syncer{cfg: cfg, log: cfg.Logger.With("component", "peers"), seen: newSeenIDs(cfg.SeenSize)}
	s.plan.Store(&plan{})
	seen := map[string]bool{}
	for _, u := range cfg.Peers {
		if id := nostr.NormalizeURL(u); !seen[id] { // one peer, one set of watermarks
			seen[id] = true
			s.peers = append(s.peers, newPeer(s, u))
		}
	}
	return s
}

// Run syncs with every peer until ctx ends, then waits for all of its
// goroutines, saves the watermarks and returns nil. It returns an error
// at once, starting nothing, when the configuration cannot work.
func (s *Syncer) Run(ctx context.Context) error {
	if err := s.check(); err != nil {
		return err
	}
	if !s.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer s.running.Store(false)
	s.load()
	var wg sync.WaitGroup
	for _, p := range s.peers {
		p.drainSignals() // a Refresh before Run is served by the load above
		wg.Go(func() { p.run(ctx) })
	}
	<-ctx.Done()
	wg.Wait()
	return nil
}

func (s *Syncer) check() error {
	if s.cfg.Local == nil {
		return ErrNoLocal
	}
	for _, u := range s.cfg.Peers {
		if !strings.HasPrefix(u, "ws://") && !strings.HasPrefix(u, "wss://") {
			return fmt.Errorf("%w: %q", ErrBadPeerURL, redact.URL(u))
		}
	}
	return nil
}

// Refresh re-reads Config.Interests and Config.Outbox. Peers resubscribe
// when the interests changed (a new filter is fetched from its beginning,
// the others from their watermarks) and catch up on the outbox when it
// changed. Safe to call at any time, from any goroutine.
func (s *Syncer) Refresh() {
	old, now := s.load()
	pull := !sameKeys(old.interests, now.interests)
	push := !sameKeys(old.outbox, now.outbox)
	if !pull && !push {
		return
	}
	s.log.Debug("plan changed", "interests", len(now.interests), "outbox", len(now.outbox))
	for _, p := range s.peers {
		if pull {
			signal(p.resubscribe)
		}
		if push {
			signal(p.resync)
		}
	}
}

// load reads the plan from the configuration.
func (s *Syncer) load() (old, now *plan) {
	s.planMu.Lock()
	defer s.planMu.Unlock()
	now = &plan{interests: keyFilters(s.cfg.Interests()), outbox: keyFilters(s.cfg.Outbox())}
	return s.plan.Swap(now), now
}

// Notify tells the syncer that evt was just stored locally (call it from
// the relay's store hook). When evt matches the outbox it is queued for
// every connected peer; a peer that is not connected gets it when it
// catches up. Every notified id is remembered as stored, so that its
// copies from peers are skipped. Notify never blocks.
func (s *Syncer) Notify(evt *nostr.Event) {
	s.seen.add(evt.ID)
	if !s.plan.Load().inOutbox(evt) {
		return
	}
	for _, p := range s.peers {
		p.enqueue(evt)
	}
}

// Status reports every peer, in the order of Config.Peers (a repeated
// URL is followed once).
func (s *Syncer) Status() []PeerStatus {
	out := make([]PeerStatus, len(s.peers))
	for i, p := range s.peers {
		out[i] = p.stats.snapshot(p.url)
	}
	return out
}

// signal wakes whoever waits on c (a channel of capacity 1) without
// blocking; signals sent while one is pending merge.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
