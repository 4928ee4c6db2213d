package dm

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// errClosed is the cause of the run context when Close is called.
var errClosed = errors.New("dm: service closed")

// Service answers NIP-17 DMs to local agents. New starts nothing; Start
// catches up and starts the one dispatcher goroutine, which starts up to
// MaxConcurrent workers; Close stops and waits for all of them.
type Service struct {
	cfg    Config
	cfgErr error
	led    Ledger
	lim    *limiter
	q      *queue

	unhook func()
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup
}

// New returns a Service for cfg; a config error is reported by Start.
func New(cfg Config) *Service {
	c, err := cfg.withDefaults()
	return &Service{cfg: c, cfgErr: err}
}

// Start loads the processed-wrap state, publishes again the replies a
// stop left pending, publishes each local agent's DM relay list, starts listening for stored gift wraps and queues those
// stored since the watermark (minus the catch-up window). The service runs
// until Close; ctx bounds only the start itself.
func (s *Service) Start(ctx context.Context) error {
	if s.cfgErr != nil {
		return s.cfgErr
	}
	if s.cancel != nil {
		return errors.New("dm: already started")
	}
	led := s.cfg.Ledger
	if led == nil {
		var err error
		if led, err = openLedger(s.cfg.StatePath, s.cfg.CatchUpWindow); err != nil {
			return err
		}
	}
	s.led, s.lim, s.q = led, newLimiter(s.cfg.RateLimit, s.cfg.Now), newQueue(s.cfg.QueueSize)
	if err := s.resend(ctx); err != nil {
		return err
	}
	s.announceAll(ctx)
	s.unhook = s.cfg.Source.OnStored(s.offer) // before the catch-up: nothing falls between
	if err := s.catchUp(ctx); err != nil {
		s.unhook()
		return err
	}
	runCtx, cancel := context.WithCancelCause(context.Background())
	s.cancel = cancel
	s.wg.Add(1)
	go s.dispatch(runCtx)
	return nil
}

// Close stops listening, cancels the answers in progress and waits for
// every goroutine until ctx ends. An answer cut short before its reply was
// prepared is answered by the next Start; a reply cut short while being
// published is published again, unchanged, by the next Start.
func (s *Service) Close(ctx context.Context) error {
	if s.cancel == nil {
		return nil
	}
	s.unhook()
	s.cancel(errClosed)
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("dm: close: %w", context.Cause(ctx))
	}
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
			if err := s.led.Mark(id, nostr.Timestamp(p.At), s.cfg.Now()); err != nil {
				log.Error("dm: state not saved", "err", err)
			}
		}
	}
	return nil
}

// offer is the OnStored hook: it queues gift wraps young enough to be
// answered and not yet seen. It does no I/O and never blocks.
func (s *Service) offer(evt *nostr.Event) {
	if evt.Kind != nostr.KindGiftWrap || s.tooOld(evt) || s.led.Has(evt.ID) {
		return
	}
	if !s.q.push(evt) {
		s.cfg.Logger.Warn("dm: queue full, gift wrap left for the next start", "wrap", evt.ID)
	}
}

// tooOld: wraps from before the catch-up window are never answered (their
// ids may already have been forgotten).
func (s *Service) tooOld(evt *nostr.Event) bool {
	return evt.CreatedAt.Time().Before(s.cfg.Now().Add(-s.cfg.CatchUpWindow))
}

// catchUp queues, oldest first, the wraps to each local agent stored since
// the ledger's starting point.
func (s *Service) catchUp(ctx context.Context) error {
	since := s.led.Since(s.cfg.Now())
	for _, agent := range s.cfg.Agents() {
		wraps, err := s.storedWraps(ctx, agent, since)
		if err != nil {
			return fmt.Errorf("dm: catch up on %s: %w", agent, err)
		}
		for i := len(wraps) - 1; i >= 0; i-- {
			s.offer(wraps[i])
		}
	}
	return nil
}

// catchUpPage is the page size of a catch-up query.
const catchUpPage = 500

// storedWraps returns every stored wrap to agent created since, newest first.
func (s *Service) storedWraps(ctx context.Context, agent string, since nostr.Timestamp) ([]*nostr.Event, error) {
	var all []*nostr.Event
	f := nostr.Filter{Kinds: []int{nostr.KindGiftWrap}, Tags: nostr.TagMap{"p": {agent}}, Since: &since, Limit: catchUpPage}
	for {
		page, err := s.cfg.Source.QuerySync(ctx, f)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if len(page) < catchUpPage {
			return all, nil
		}
		until := page[len(page)-1].CreatedAt // may repeat a second's events: the queue dedupes
		if f.Until != nil && *f.Until == until {
			return all, nil // a full page within one second: stop rather than loop
		}
		f.Until = &until
	}
}
