package dm

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// Service answers NIP-17 DMs to local agents. New builds it and starts
// nothing; Run catches up, answers until its ctx ends, and returns once
// every answer in progress has stopped.
type Service struct {
	cfg    Config
	cfgErr error
	led    Ledger
	lim    *limiter
	q      *queue

	running atomic.Bool
	ready   chan struct{}
	wg      sync.WaitGroup // the workers
}

// ErrRunning is returned by a second Run of the same Service.
var ErrRunning = errors.New("dm: already running")

// New returns a Service for cfg; a config error is reported by Run.
func New(cfg Config) *Service {
	c, err := cfg.withDefaults()
	return &Service{cfg: c, cfgErr: err, ready: make(chan struct{})}
}

// Ready is closed once Run has caught up and answers new DMs.
func (s *Service) Ready() <-chan struct{} { return s.ready }

// Run loads the processed-wrap state, publishes again the replies a stop
// left pending, publishes each local agent's DM relay list, listens for
// stored gift wraps and queues those stored since the watermark (minus the
// catch-up window); then it is Ready and answers them, up to MaxConcurrent
// at a time, until ctx ends. It returns once every answer in progress has
// stopped: an answer cut short before its reply was prepared is answered
// by the next Run; a reply cut short while being published is published
// again, unchanged, by the next Run (the ledger; see doc.go). A stop
// during the start returns ctx's error, wrapped.
func (s *Service) Run(ctx context.Context) error {
	if s.cfgErr != nil {
		return s.cfgErr
	}
	if !s.running.CompareAndSwap(false, true) {
		return ErrRunning
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
	unhook := s.cfg.Source.OnStored(s.offer) // before the catch-up: nothing falls between
	defer unhook()
	if err := s.catchUp(ctx); err != nil {
		return err
	}
	close(s.ready)
	s.dispatch(ctx)
	s.wg.Wait()
	return nil
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
