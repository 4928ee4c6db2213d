package peers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip11"

	"github.com/agentnode/agentnode/internal/backoff"
	"github.com/agentnode/agentnode/internal/redact"
)

// peer is one followed relay: a reconnect loop around sessions.
type peer struct {
	s   *Syncer
	url string // as configured
	id  string // normalized: the watermark key
	log *slog.Logger

	queue       chan *nostr.Event // notified outbox events
	resync      chan struct{}     // push: catch up from the watermarks
	resubscribe chan struct{}     // pull: the interests changed
	online      atomic.Bool       // a session is pushing: enqueue notified events
	noNIP77     atomic.Bool       // the peer did not answer NIP-77: catch up by REQ (negcatchup.go)
	stats       stats

	mu    sync.Mutex // guards marks and dirty
	marks Marks
	dirty bool
}

func newPeer(s *Syncer, url string) *peer {
	return &peer{
		s: s, url: url, id: nostr.NormalizeURL(url),
		log:         s.log.With("peer", redact.URL(url)), // a URL may carry credentials
		queue:       make(chan *nostr.Event, s.cfg.QueueSize),
		resync:      make(chan struct{}, 1),
		resubscribe: make(chan struct{}, 1),
	}
}

// run connects, syncs until the connection ends, waits, and again, until
// ctx ends (backoff.Loop). The backoff restarts after every session that
// caught up.
func (p *peer) run(ctx context.Context) {
	p.loadMarks(ctx)
	defer p.save(context.WithoutCancel(ctx))
	p.s.cfg.Backoff.Loop(ctx, p.session, func(r backoff.Retry) {
		p.stats.setError(r.Err)
		level := slog.LevelInfo // a session that ended after catching up
		switch {
		case r.Attempt > 0: // still down: said once already
			level = slog.LevelDebug
		case !r.Healthy: // unreachable, or dropped before catching up: the operator should know
			level = slog.LevelWarn
		}
		p.log.Log(ctx, level, "peer session ended", "err", r.Err, "retry_in", r.Wait.Round(time.Millisecond))
	})
}

// session is one connection: pull, push and save run side by side until
// one of them fails, the connection drops or ctx ends. caughtUp reports
// whether the pull side completed its catch-up.
func (p *peer) session(ctx context.Context) (caughtUp bool, err error) {
	conn, err := dial(ctx, p.url, p.s.cfg.DialTimeout, p.log)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	p.stats.connected.Store(true)
	defer p.stats.connected.Store(false)
	p.stats.seen()
	p.log.Info("peer connected")

	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	lim := p.limits(sctx)
	var caught atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() { cancel(p.pull(sctx, conn, lim, &caught)) })
	wg.Go(func() { cancel(p.push(sctx, conn, lim)) })
	wg.Go(func() { p.saveLoop(sctx) })
	wg.Go(func() { // a dropped connection ends the session
		select {
		case <-conn.Done():
			cancel(fmt.Errorf("%w: %w", ErrDisconnected, conn.Err()))
		case <-sctx.Done():
		}
	})
	wg.Wait()
	return caught.Load(), context.Cause(sctx)
}

// limits are the page sizes for one session.
type limits struct {
	page int // catch-up page size
	max  int // the largest limit the peer honours (== page if unknown)
}

// limits reads the peer's NIP-11 max_limit (best effort): a page larger
// than what the peer serves would look complete when it is not.
func (p *peer) limits(ctx context.Context) limits {
	lim := limits{page: p.s.cfg.PageSize, max: p.s.cfg.PageSize}
	ictx, cancel := context.WithTimeout(ctx, p.s.cfg.DialTimeout)
	defer cancel()
	info, err := nip11.Fetch(ictx, p.url)
	if err == nil {
		p.noteNIPs(info.SupportedNIPs) // negcatchup.go
	}
	if err != nil || info.Limitation == nil || info.Limitation.MaxLimit <= 0 {
		return lim
	}
	lim.max = info.Limitation.MaxLimit
	lim.page = min(lim.page, lim.max)
	return lim
}

// drainSignals forgets pending resubscribe and resync signals.
func (p *peer) drainSignals() {
	for _, c := range []chan struct{}{p.resubscribe, p.resync} {
		select {
		case <-c:
		default:
		}
	}
}

// saveLoop saves changed watermarks every SaveEvery until ctx ends.
func (p *peer) saveLoop(ctx context.Context) {
	tick := time.NewTicker(p.s.cfg.SaveEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			p.save(ctx)
		}
	}
}

// sleep waits d or until ctx ends; it reports whether d passed.

// errResubscribe and errResync end a pull or push pass to start a new one.
var (
	errResubscribe = errors.New("peers: interests changed")
	errResync      = errors.New("peers: outbox catch-up requested")
)
