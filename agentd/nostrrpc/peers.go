package nostrrpc

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/backoff"
	"github.com/agentnode/agentnode/internal/relayclient"
)

// PeerListenerConfig wires a PeerListener.
type PeerListenerConfig struct {
	Relays []string // the other relays to listen on (websocket URLs)
	// Agents lists the local agents (hex pubkeys); it is read again every
	// Resync and after Changed.
	Agents func() []string
	Keys   func(ctx context.Context, pubkey string) (sk string, ok bool) // a local agent's secret key
	Server *Server                                                       // serves what arrives
	Logger *slog.Logger
	Resync time.Duration // default 5s
}

// PeerListener listens on other relays than the node's own (its peers)
// for kind-25910 requests p-tagged to local agents and hands them to a
// Server, which answers on the relay the request came from. So a caller
// that publishes only to its own relay reaches an agent whose node peers
// that relay (one-way peering is enough for both directions: the other
// node's client already publishes to its peers).
//
// It keeps one subscription per (relay, local agent), authenticated
// (NIP-42) as that agent: relays serve kind 25910 only to its author and
// p-tagged readers. A dropped subscription is redialled with a back-off
// (250 ms doubling to 30 s). Kind 25910 is ephemeral: nothing stored is
// replayed; requests published while a subscription is down are lost
// (their callers time out).
type PeerListener struct {
	cfg  PeerListenerConfig
	log  *slog.Logger
	live atomic.Int64
	wake chan struct{}
}

// NewPeerListener returns a PeerListener for cfg. It starts nothing.
func NewPeerListener(cfg PeerListenerConfig) *PeerListener {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Resync <= 0 {
		cfg.Resync = 5 * time.Second
	}
	return &PeerListener{cfg: cfg, log: cfg.Logger, wake: make(chan struct{}, 1)}
}

// Live is how many (relay, agent) subscriptions are open now.
func (l *PeerListener) Live() int { return int(l.live.Load()) }

// Changed makes Run read the local agents again at once.
func (l *PeerListener) Changed() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// listenPair is one (relay, agent) subscription.
type listenPair struct{ relay, agent string }

// Run listens until ctx ends, following the local agents, and returns nil
// once every subscription has stopped. With no relays it only waits.
func (l *PeerListener) Run(ctx context.Context) error {
	running := map[listenPair]context.CancelFunc{}
	var wg sync.WaitGroup
	defer func() {
		for _, cancel := range running {
			cancel()
		}
		wg.Wait()
	}()
	t := time.NewTicker(l.cfg.Resync)
	defer t.Stop()
	for {
		l.reconcile(ctx, running, &wg)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-l.wake:
		}
	}
}

// reconcile starts the subscriptions of new agents and stops those of
// agents gone.
func (l *PeerListener) reconcile(ctx context.Context, running map[listenPair]context.CancelFunc, wg *sync.WaitGroup) {
	if len(l.cfg.Relays) == 0 {
		return
	}
	want := map[listenPair]bool{}
	for _, a := range l.cfg.Agents() {
		for _, u := range l.cfg.Relays {
			want[listenPair{u, a}] = true
		}
	}
	for p, cancel := range running {
		if !want[p] {
			cancel()
			delete(running, p)
		}
	}
	for p := range want {
		if _, ok := running[p]; ok {
			continue
		}
		sk, ok := l.cfg.Keys(ctx, p.agent)
		if !ok {
			continue
		}
		pctx, cancel := context.WithCancel(ctx)
		running[p] = cancel
		wg.Go(func() { l.listen(pctx, p, sk) })
	}
}

// peerRetry spaces a peer subscription's reconnections (internal/backoff,
// the one schedule; it starts over after a subscription that went live).
var peerRetry = backoff.Backoff{Min: 250 * time.Millisecond, Max: 30 * time.Second}

// listen keeps one subscription open until ctx ends.
func (l *PeerListener) listen(ctx context.Context, p listenPair, sk string) {
	r := relayclient.New(p.relay, sk, l.log)
	defer r.Close()
	peerRetry.Loop(ctx, func(ctx context.Context) (bool, error) {
		return l.subscribe(ctx, r, p)
	}, func(rt backoff.Retry) {
		l.log.Debug("nostrrpc: peer subscription ended", "relay", p.relay, "agent", p.agent, "err", rt.Err, "retry_in", rt.Wait)
	})
}

// subscribe runs one subscription for p's requests on r until it ends;
// live reports whether it reached EOSE (counted in l.live meanwhile).
func (l *PeerListener) subscribe(ctx context.Context, r *relayclient.Relay, p listenPair) (live bool, err error) {
	filter := nostr.Filter{Kinds: []int{Kind}, Tags: nostr.TagMap{"p": {p.agent}}}
	var up atomic.Bool
	err = r.Subscribe(ctx, nostr.Filters{filter},
		func(evt *nostr.Event) {
			// checked before it takes a slot of the server's queue: a
			// peer relay cannot crowd out requests with forgeries
			if signed(evt) {
				l.cfg.Server.Offer(evt, r.Publish)
			}
		},
		func() { up.Store(true); l.live.Add(1) })
	if up.Load() {
		l.live.Add(-1)
	}
	return up.Load(), err
}
