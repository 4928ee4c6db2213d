package peers

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/relayclient"
)

// track is one Interests filter during a pull pass.
type track struct {
	keyed
	since  nostr.Timestamp // where its catch-up started (0: the beginning)
	count  int             // catch-up events that matched it
	oldest nostr.Timestamp // the oldest of those
	newest nostr.Timestamp // newest created_at received for it, clamped to now
	done   bool            // caught up: newest is now its watermark
}

// pull runs pull passes until one fails; a change of interests starts a
// new pass.
func (p *peer) pull(ctx context.Context, conn *relayclient.Conn, lim limits, caught *atomic.Bool) error {
	for {
		err := p.pullPass(ctx, conn, lim, caught)
		if !errors.Is(err, errResubscribe) {
			return err
		}
		p.log.Debug("resubscribing")
	}
}

// pullPass opens two subscriptions for the current interests: a live one
// (limit 0, no since: every new matching event, whatever its created_at)
// and, once the peer has acknowledged it with EOSE, a catch-up one (since
// each filter's watermark minus the overlap). khatru handles each REQ in
// its own goroutine and registers a REQ's listener only after running its
// query, so sending both at once could lose an event stored in between;
// in this order nothing falls between them. An event both deliver is a
// duplicate, which the local store acknowledges.
func (p *peer) pullPass(ctx context.Context, conn *relayclient.Conn, lim limits, caught *atomic.Bool) error {
	interests := p.s.plan.Load().interests
	p.retain(pullSide, interests)
	if len(interests) == 0 {
		caught.Store(true)
		return p.idle(ctx)
	}
	tracks := p.tracks(interests)
	live, err := subscribe(ctx, conn, liveFilters(tracks))
	if err != nil {
		return err
	}
	f := &follower{p: p, conn: conn, lim: lim, tracks: tracks, live: live}
	defer func() {
		live.Close()
		f.closeCatchUp()
		f.stopNeg()
	}()
	return f.run(ctx, caught)
}

// follower is one pull pass: a live subscription, then a catch-up.
type follower struct {
	p      *peer
	conn   *relayclient.Conn
	lim    limits
	tracks []track
	live   *relayclient.Sub
	cu     *relayclient.Sub // nil before the live EOSE and after the catch-up
	neg    negRun           // the NIP-77 catch-up, when it runs (negcatchup.go)
}

// run stores what the subscriptions deliver until the pass ends. At the
// live EOSE it opens the catch-up; at the catch-up's EOSE it finishes it.
// Both EOSEs are due within DialTimeout.
func (f *follower) run(ctx context.Context, caught *atomic.Bool) error {
	liveEOSE := f.live.EOSE
	ack := time.NewTimer(f.p.s.cfg.DialTimeout)
	defer ack.Stop()
	for {
		var err error
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-f.p.resubscribe:
			return errResubscribe
		case <-ack.C:
			return fmt.Errorf("peers: subscribe: no EOSE within %v", f.p.s.cfg.DialTimeout)
		case reason := <-f.live.Closed:
			return fmt.Errorf("%w: %s", ErrClosedByPeer, reason)
		case reason := <-f.cuClosed():
			return fmt.Errorf("%w: %s", ErrClosedByPeer, reason)
		case evt, ok := <-f.live.Events:
			err = f.take(ctx, evt, ok, false)
		case evt, ok := <-f.cuEvents():
			err = f.take(ctx, evt, ok, true)
		case <-liveEOSE:
			liveEOSE = nil
			if f.startNeg(ctx) {
				ack.Stop() // the NIP-77 catch-up bounds each of its answers itself
				break
			}
			ack.Reset(f.p.s.cfg.DialTimeout)
			err = f.openCatchUp(ctx)
		case evt := <-f.neg.events:
			err = f.p.take(ctx, evt, f.tracks, true)
		case nerr := <-f.neg.done:
			f.neg.done = nil
			if err = f.finishNeg(ctx, nerr, caught); errors.Is(err, errNoNIP77) {
				ack.Reset(f.p.s.cfg.DialTimeout)
				err = f.openCatchUp(ctx)
			}
		case <-f.cuEOSE():
			ack.Stop()
			err = f.finishCatchUp(ctx, caught)
		}
		if err != nil {
			return err
		}
	}
}

func (f *follower) openCatchUp(ctx context.Context) error {
	cu, err := subscribe(ctx, f.conn, catchUpFilters(f.tracks, f.lim.page))
	if err != nil {
		return err
	}
	f.cu = cu
	return nil
}

// finishCatchUp fetches older pages where a filter filled its page,
// closes the catch-up subscription and commits the watermarks.
func (f *follower) finishCatchUp(ctx context.Context, caught *atomic.Bool) error {
	if err := f.p.backfill(ctx, f.conn, f.lim, f.tracks); err != nil {
		return err
	}
	f.closeCatchUp()
	f.complete(ctx, caught)
	return nil
}

// complete commits the watermarks of a finished catch-up.
func (f *follower) complete(ctx context.Context, caught *atomic.Bool) {
	f.p.caughtUp(f.tracks)
	if !caught.Load() { // the session's first catch-up: say how it went
		events := 0
		for _, t := range f.tracks {
			events += t.count
		}
		f.p.log.Info("peer caught up", "filters", len(f.tracks), "events", events)
	}
	caught.Store(true)
	f.p.save(ctx)
}

func (f *follower) take(ctx context.Context, evt *nostr.Event, ok, catchUp bool) error {
	if !ok {
		return ErrDisconnected
	}
	return f.p.take(ctx, evt, f.tracks, catchUp)
}

func (f *follower) closeCatchUp() {
	if f.cu != nil {
		f.cu.Close()
		f.cu = nil
	}
}

// The catch-up's channels, nil (never ready) while there is none.
func (f *follower) cuEvents() <-chan *nostr.Event {
	if f.cu == nil {
		return nil
	}
	return f.cu.Events
}

func (f *follower) cuEOSE() <-chan struct{} {
	if f.cu == nil {
		return nil
	}
	return f.cu.EOSE
}

func (f *follower) cuClosed() <-chan string {
	if f.cu == nil {
		return nil
	}
	return f.cu.Closed
}

// idle waits for interests to appear.
func (p *peer) idle(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-p.resubscribe:
		return errResubscribe
	}
}

func (p *peer) tracks(interests []keyed) []track {
	out := make([]track, len(interests))
	for i, k := range interests {
		out[i] = track{keyed: k, since: p.since(pullSide, k.key)}
	}
	return out
}

func liveFilters(tracks []track) nostr.Filters {
	out := make(nostr.Filters, len(tracks))
	for i, t := range tracks {
		out[i] = liveOnly(t.filter)
	}
	return out
}

func catchUpFilters(tracks []track, page int) nostr.Filters {
	out := make(nostr.Filters, len(tracks))
	for i, t := range tracks {
		out[i] = withWindow(t.filter, t.since, 0, page)
	}
	return out
}

// take stores evt and advances the tracks it matches. An event already
// stored (a copy from another peer, or a catch-up's overlap) is found by
// its id, once the id is checked against the body, and costs no signature
// check and no store; a new one is verified before it is stored. Only a
// local failure is returned: a bad event or a refusal is counted, logged
// and skipped.
func (p *peer) take(ctx context.Context, evt *nostr.Event, tracks []track, catchUp bool) error {
	p.stats.received.Add(1)
	p.stats.seen()
	if err := checkID(evt); err != nil {
		p.refuse(evt, err)
		return nil
	}
	if p.s.known(ctx, evt) {
		p.stats.duplicates.Add(1)
		p.stats.stored.Add(1)
		p.advance(evt, tracks, catchUp)
		return nil
	}
	p.stats.verified.Add(1)
	if err := checkSignature(evt); err != nil {
		p.refuse(evt, err)
		return nil
	}
	switch err := p.s.cfg.Local.Publish(ctx, evt); classify(err) {
	case accepted:
		p.stats.stored.Add(1)
		p.s.seen.add(evt.ID)
	case refused:
		p.stats.refused.Add(1)
		p.log.Debug("event refused by the local store", "id", evt.ID, "kind", evt.Kind, "reason", err)
	default:
		return fmt.Errorf("peers: local store: %w", err)
	}
	p.advance(evt, tracks, catchUp)
	return nil
}

func (p *peer) refuse(evt *nostr.Event, err error) {
	p.stats.refused.Add(1)
	p.log.Debug("event refused", "id", evt.ID, "kind", evt.Kind, "err", err)
}

// advance records evt on every track it matches; a caught-up track moves
// its watermark.
func (p *peer) advance(evt *nostr.Event, tracks []track, catchUp bool) {
	ts := min(evt.CreatedAt, nostr.Now())
	for i := range tracks {
		t := &tracks[i]
		if !t.filter.MatchesIgnoringTimestampConstraints(evt) {
			continue
		}
		if catchUp {
			t.count++
			if t.oldest == 0 || evt.CreatedAt < t.oldest {
				t.oldest = evt.CreatedAt
			}
		}
		t.newest = max(t.newest, ts)
		if t.done {
			p.raise(pullSide, t.key, t.newest)
		}
	}
}

// caughtUp makes every track's newest event its watermark.
func (p *peer) caughtUp(tracks []track) {
	for i := range tracks {
		t := &tracks[i]
		t.done = true
		if t.newest > 0 {
			p.raise(pullSide, t.key, t.newest)
		}
	}
}

// checkID checks that evt's id is the hash of its contents: then a stored
// event with that id is this very event. Nothing from a peer is trusted.
func checkID(evt *nostr.Event) error {
	if !evt.CheckID() {
		return ErrBadID
	}
	return nil
}

// checkSignature checks that evt's signature is its author's.
func checkSignature(evt *nostr.Event) error {
	if ok, err := evt.CheckSignature(); err != nil || !ok {
		return ErrBadSignature
	}
	return nil
}
