package peers

import (
	"context"
	"errors"
	"fmt"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/relayclient"
)

// backfill fetches, for every track whose catch-up filled its page, the
// older pages (relayclient.Walk from the oldest event seen, inclusive): a
// second holding more than a page is read through by the ids already
// read, up to ten pages of it and what the peer answers in one query;
// past that the rest of that second is skipped, with a warning.
func (p *peer) backfill(ctx context.Context, conn *relayclient.Conn, lim limits, tracks []track) error {
	for i := range tracks {
		t := &tracks[i]
		if t.count < lim.page || t.oldest <= 0 || t.oldest < t.since {
			continue
		}
		if err := p.backfillTrack(ctx, conn, lim, t, tracks); err != nil {
			return err
		}
	}
	return nil
}

func (p *peer) backfillTrack(ctx context.Context, conn *relayclient.Conn, lim limits, t *track, tracks []track) error {
	query := relayclient.QueryFunc(func(ctx context.Context, f nostr.Filter) ([]*nostr.Event, error) { return p.fetch(ctx, conn, f) })
	_, err := relayclient.Walk(ctx, query, withWindow(t.filter, t.since, t.oldest, lim.page), relayclient.Paging{Page: lim.page, Honours: lim.page,
		OnSkip: func(second nostr.Timestamp, read int, why string) error {
			p.log.Warn("backfill skips the rest of a crowded second", "second", second, "read", read, "why", why)
			return nil
		}}, func(evts []*nostr.Event) error {
		for _, evt := range evts {
			if err := p.take(ctx, evt, tracks, false); err != nil {
				return err
			}
		}
		return nil
	})
	return err
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
