package peers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/backoff"
	"github.com/agentnode/agentnode/internal/relayclient"
)

// enqueue hands a notified outbox event to a connected peer's pusher. A
// full queue turns into a catch-up from the watermarks.
func (p *peer) enqueue(evt *nostr.Event) {
	if !p.online.Load() {
		return
	}
	select {
	case p.queue <- evt:
	default:
		signal(p.resync)
	}
}

// push catches up on the outbox (everything newer than the peer's push
// watermarks, minus the overlap), then pushes notified events as they
// come, until the session ends. A resync (outbox changed, queue overflow)
// catches up again.
func (p *peer) push(ctx context.Context, conn *relayclient.Conn, lim limits) error {
	p.online.Store(true) // before the catch-up query: nothing falls between
	defer p.online.Store(false)
	for {
		outbox, err := p.pushCatchUp(ctx, conn, lim)
		if err != nil {
			return err
		}
		if err := p.pushLive(ctx, conn, outbox); !errors.Is(err, errResync) {
			return err
		}
	}
}

// pushCatchUp pushes the pending outbox events, oldest first, and returns
// the outbox it caught up on.
func (p *peer) pushCatchUp(ctx context.Context, conn *relayclient.Conn, lim limits) ([]keyed, error) {
	select {
	case <-p.resync: // this catch-up serves it
	default:
	}
	outbox := p.s.plan.Load().outbox
	p.retain(pushSide, outbox)
	pending, err := p.pending(ctx, outbox, lim.page)
	if err != nil {
		return nil, err
	}
	if len(pending) > 0 {
		p.log.Debug("pushing outbox catch-up", "events", len(pending))
	}
	for _, evt := range pending {
		if err := p.pushOne(ctx, conn, evt, outbox); err != nil {
			return nil, err
		}
	}
	return outbox, nil
}

// pushLive pushes notified events. Only filters that went through a
// catch-up (outbox) move their watermarks: a filter added since is caught
// up first, from its beginning.
func (p *peer) pushLive(ctx context.Context, conn *relayclient.Conn, outbox []keyed) error {
	for {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-p.resync:
			return errResync
		case evt := <-p.queue:
			if err := p.pushOne(ctx, conn, evt, outbox); err != nil {
				return err
			}
		}
	}
}

// pending reads the local outbox events newer than each filter's push
// watermark (minus the overlap), page by page, oldest first, each once.
func (p *peer) pending(ctx context.Context, outbox []keyed, page int) ([]*nostr.Event, error) {
	seen := map[string]*nostr.Event{}
	for _, k := range outbox {
		if err := p.localPages(ctx, k.filter, p.since(pushSide, k.key), page, seen); err != nil {
			return nil, err
		}
	}
	out := make([]*nostr.Event, 0, len(seen))
	for _, evt := range seen {
		out = append(out, evt)
	}
	slices.SortFunc(out, func(a, b *nostr.Event) int {
		return cmp.Or(cmp.Compare(a.CreatedAt, b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// localPages adds to seen every local event matching f from since on
// (relayclient.Walk; the local store answers a page in full).
func (p *peer) localPages(ctx context.Context, f nostr.Filter, since nostr.Timestamp, page int, seen map[string]*nostr.Event) error {
	_, err := relayclient.Walk(ctx, p.s.cfg.Local, withWindow(f, since, 0, page), relayclient.Paging{Page: page, Honours: page,
		OnSkip: func(second nostr.Timestamp, read int, why string) error {
			p.log.Warn("outbox catch-up leaves the rest of a crowded second", "second", second, "read", read, "why", why)
			return nil
		}}, func(evts []*nostr.Event) error {
		for _, evt := range evts {
			seen[evt.ID] = evt
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("peers: local query: %w", err)
	}
	return nil
}

// pushOne publishes evt to the peer and moves the push watermarks of the
// outbox filters it matches. A refusal is final (counted, skipped); a
// rate limit waits and tries again; anything else ends the session and
// lowers the watermarks so that evt is pushed again.
func (p *peer) pushOne(ctx context.Context, conn *relayclient.Conn, evt *nostr.Event, outbox []keyed) error {
	for try := 0; ; try++ {
		err := publish(ctx, conn, evt, p.s.cfg.PublishTimeout)
		switch classify(err) {
		case accepted:
			p.stats.pushed.Add(1)
			p.stats.seen()
			p.pushed(evt, outbox, true)
			return nil
		case refused:
			p.stats.pushRefused.Add(1)
			p.log.Debug("peer refused an event", "id", evt.ID, "kind", evt.Kind, "reason", err)
			p.pushed(evt, outbox, true)
			return nil
		case retryLater:
			if !backoff.Sleep(ctx, p.s.cfg.Backoff.Delay(try)) {
				return context.Cause(ctx)
			}
		default:
			p.pushed(evt, outbox, false)
			return fmt.Errorf("peers: push %s: %w", evt.ID, err)
		}
	}
}

// pushed raises (ok) or lowers (!ok) the push watermarks evt matches.
func (p *peer) pushed(evt *nostr.Event, outbox []keyed, ok bool) {
	for _, k := range outbox {
		if !k.filter.Matches(evt) {
			continue
		}
		if ok {
			p.raise(pushSide, k.key, evt.CreatedAt)
		} else {
			p.lower(pushSide, k.key, evt.CreatedAt)
		}
	}
}
