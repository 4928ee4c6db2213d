package peers

import (
	"context"
	"errors"
	"fmt"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/relayclient"
)

// backfill fetches, for every track whose catch-up filled its page, the
// older pages (until = the oldest event seen, inclusive) until a page
// comes back short. A page that holds a single second is asked again with
// a larger limit, up to what the peer honours; past that the rest of that
// second is skipped, with a warning.
func (p *peer) backfill(ctx context.Context, conn *relayclient.Conn, lim limits, tracks []track) error {
	for i := range tracks {
		t := &tracks[i]
		if t.count < lim.page {
			continue
		}
		if err := p.backfillTrack(ctx, conn, lim, t, tracks); err != nil {
			return err
		}
	}
	return nil
}

func (p *peer) backfillTrack(ctx context.Context, conn *relayclient.Conn, lim limits, t *track, tracks []track) error {
	until, limit := t.oldest, lim.page
	for until > 0 && until >= t.since {
		evts, err := p.fetch(ctx, conn, withWindow(t.filter, t.since, until, limit))
		if err != nil {
			return err
		}
		for _, evt := range evts {
			if err := p.take(ctx, evt, tracks, false); err != nil {
				return err
			}
		}
		if len(evts) < limit {
			return nil
		}
		oldest := oldestOf(evts)
		switch {
		case oldest < until:
			until = oldest
		case limit < lim.max:
			limit = min(limit*4, lim.max)
		default:
			p.log.Warn("more events in one second than the peer serves in one query: skipping the rest",
				"second", until, "limit", limit)
			until--
		}
	}
	return nil
}

// fetch runs one query on conn and returns what the peer stored, up to
// its EOSE. A timeout, a CLOSED and a lost connection are errors, never a
// partial page.
func (p *peer) fetch(ctx context.Context, conn *relayclient.Conn, f nostr.Filter) ([]*nostr.Event, error) {
	ctx, cancel := context.WithTimeout(ctx, p.s.cfg.DialTimeout)
	defer cancel()
	evts, err := conn.Query(ctx, nostr.Filters{f})
	if closed := (*relayclient.ClosedError)(nil); errors.As(err, &closed) {
		return nil, fmt.Errorf("%w: %s", ErrClosedByPeer, closed.Reason)
	}
	if err != nil {
		if errors.Is(err, relayclient.ErrConnClosed) {
			return nil, fmt.Errorf("%w: %w", ErrDisconnected, err)
		}
		return nil, fmt.Errorf("peers: query: %w", err)
	}
	return evts, nil
}

func oldestOf(evts []*nostr.Event) nostr.Timestamp {
	oldest := evts[0].CreatedAt
	for _, e := range evts[1:] {
		oldest = min(oldest, e.CreatedAt)
	}
	return oldest
}
