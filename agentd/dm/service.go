package dm

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/relayclient"
)

// Service answers NIP-17 DMs to local agents. New builds it and starts
// nothing; Run catches up, answers until its ctx ends, and returns once
// every answer in progress has stopped.
type Service struct {
	cfg    Config
	cfgErr error
	led    Ledger
	lim    *limiter

	// The pipeline (pipeline.go): stored wraps wait in intake to be
	// opened; opened messages wait in known (the owner, allowlisted
	// senders, siblings) or strangers (admitted by the Gate) for a worker.
	intake    *fifo[*nostr.Event]
	known     *fifo[job]
	strangers *fifo[job]
	held      *idSet
	// dropped are the wraps of strangers recently dropped by the Gate
	// (not in the ledger; see admit).
	dropped *recentSet
	stats   counters

	running atomic.Bool
	ready   chan struct{}
	wg      sync.WaitGroup // the workers
}

// ErrRunning is returned by a second Run of the same Service.
var ErrRunning = errors.New("dm: already running")

// New returns a Service for cfg; a config error is reported by Run.
func New(cfg Config) *Service {
	c, err := cfg.withDefaults()
	return &Service{cfg: c, cfgErr: err, ready: make(chan struct{}), held: newIDSet(), dropped: newRecentSet(droppedMemory),
		intake: newFifo[*nostr.Event](c.QueueSize), known: newFifo[job](c.QueueSize), strangers: newFifo[job](strangerQueue)}
}

// Ready is closed once Run has caught up and answers new DMs.
func (s *Service) Ready() <-chan struct{} { return s.ready }

// Run loads the processed-wrap state, publishes again the replies a stop
// left pending, publishes each local agent's DM relay list, listens for
// stored gift wraps, starts the pipeline and feeds it those stored since
// the watermark (minus the catch-up window); then it is Ready and answers
// until ctx ends. It returns once every answer in progress has stopped:
// an answer cut short before its reply was prepared is answered by the
// next Run; a reply cut short while being published is published again,
// unchanged, by the next Run (the ledger; see doc.go). A stop during the
// start returns ctx's error, wrapped.
func (s *Service) Run(ctx context.Context) error {
	if s.cfgErr != nil {
		return s.cfgErr
	}
	if !s.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	led, closeLed, err := s.openLedger()
	if err != nil {
		return err
	}
	defer closeLed()
	s.led, s.lim = led, newLimiter(s.cfg.RateLimit, s.cfg.Now)
	if err := s.resend(ctx); err != nil {
		return err
	}
	s.announceAll(ctx)
	unhook := s.cfg.Source.OnStored(s.offer) // before the catch-up: nothing falls between
	defer unhook()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var pipe sync.WaitGroup
	s.startPipeline(ctx, &pipe)
	err = s.catchUp(ctx)
	if err == nil {
		close(s.ready)
		<-ctx.Done()
	}
	cancel()
	pipe.Wait()
	s.wg.Wait()
	return err
}

// openLedger is Config.Ledger, or the file ledger at StatePath (closed by
// the returned func).
func (s *Service) openLedger() (Ledger, func(), error) {
	if s.cfg.Ledger != nil {
		return s.cfg.Ledger, func() {}, nil
	}
	l, err := openLedger(s.cfg.StatePath, s.cfg.CatchUpWindow)
	if err != nil {
		return nil, nil, err
	}
	return l, func() { l.close() }, nil
}

// resend publishes the replies left pending by a stop or a crash (the
// same events: the relay takes one already stored silently) and records
// their wraps as done. One that still fails stays pending, unless its
// wrap is older than the catch-up window: then it is given up.
func (s *Service) resend(ctx context.Context) error {
	for id, p := range s.led.Pending() {
		log := s.cfg.Logger.With("wrap", id)
		if s.publishReply(ctx, log, id, nostr.Timestamp(p.At), p.Wraps) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("dm: publish pending replies: %w", err)
		}
		if time.Unix(p.At, 0).Before(s.cfg.Now().Add(-s.cfg.CatchUpWindow)) {
			log.Warn("dm: pending reply given up: older than the catch-up window")
			if err := s.led.Mark(context.WithoutCancel(ctx), id, nostr.Timestamp(p.At), s.cfg.Now()); err != nil {
				log.Error("dm: state not saved", "err", err)
			}
		}
	}
	return nil
}

// offer is the OnStored hook: it queues gift wraps young enough to be
// answered and not yet seen. It does no I/O and never blocks: when the
// intake is full the oldest waiting wrap is dropped (it stays stored;
// the next start's catch-up finds it).
func (s *Service) offer(evt *nostr.Event) {
	if !s.wanted(evt) {
		return
	}
	if old, dropped := s.intake.push(evt); dropped {
		s.held.del(old.ID)
		s.stats.wraps[wrapDropped].Add(1)
		s.cfg.Logger.Debug("dm: intake full, oldest gift wrap left for the next start", "wrap", old.ID)
	}
}

// feed queues evt for the catch-up, waiting for room; an error once ctx ends.
func (s *Service) feed(ctx context.Context, evt *nostr.Event) error {
	if !s.wanted(evt) {
		return nil
	}
	if !s.intake.pushWait(ctx, evt) {
		s.held.del(evt.ID)
		return ctx.Err()
	}
	return nil
}

// wanted reports whether evt is a gift wrap to look at (and holds it).
func (s *Service) wanted(evt *nostr.Event) bool {
	return evt.Kind == nostr.KindGiftWrap && !s.tooOld(evt) && !s.led.Has(evt.ID) && !s.dropped.has(evt.ID) && s.held.add(evt.ID)
}

// tooOld: wraps from before the catch-up window are never answered (their
// ids may already have been forgotten).
func (s *Service) tooOld(evt *nostr.Event) bool {
	return evt.CreatedAt.Time().Before(s.cfg.Now().Add(-s.cfg.CatchUpWindow))
}

// catchUp feeds the pipeline the wraps to each local agent stored since
// the ledger's starting point, newest first, page by page.
func (s *Service) catchUp(ctx context.Context) error {
	since := s.led.Since(s.cfg.Now())
	for _, agent := range s.cfg.Agents() {
		if err := s.eachStoredWrap(ctx, agent, since, s.feed); err != nil {
			return fmt.Errorf("dm: catch up on %s: %w", agent, err)
		}
	}
	return nil
}

// catchUpPage is the page size of a catch-up query.
const catchUpPage = 500

// eachStoredWrap calls fn with every stored wrap to agent created since,
// newest first, one page at a time (relayclient.Walk: a second holding
// more than a page of wraps, which anyone can stamp, is read through up
// to maxCatchUpSecond of them; then the older seconds are read on).
func (s *Service) eachStoredWrap(ctx context.Context, agent string, since nostr.Timestamp, fn func(context.Context, *nostr.Event) error) error {
	f := nostr.Filter{Kinds: []int{nostr.KindGiftWrap}, Tags: nostr.TagMap{"p": {agent}}, Since: &since}
	_, err := relayclient.Walk(ctx, s.cfg.Source, f, relayclient.Paging{Page: catchUpPage, MaxSecond: maxCatchUpSecond,
		OnSkip: func(second nostr.Timestamp, read int, why string) error {
			s.cfg.Logger.Warn("dm: catch-up leaves the rest of a crowded second", "agent", agent, "second", second, "read", read, "why", why)
			return nil
		}}, func(page []*nostr.Event) error {
		for _, evt := range page {
			if err := fn(ctx, evt); err != nil {
				return err
			}
		}
		return nil
	})
	return err
}

// maxCatchUpSecond is how many wraps of one second a catch-up reads: each
// page of that second re-reads the ones before it, so a second holding
// more (anyone chooses created_at) would cost memory and time that grow
// with the flood; older seconds are read on.
const maxCatchUpSecond = 10 * catchUpPage
