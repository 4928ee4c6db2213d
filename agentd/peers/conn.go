package peers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/relayclient"
)

// A session's connection is a relayclient.Conn: it never panics on a
// connection that drops mid-write, reports a publish whose OK never came
// as a failure, and hands each subscription's events on in order without
// one subscription's reader holding up the others (the pull side reads a
// page while the live and catch-up subscriptions stay open).

// dial connects to url. The connection's lifetime is the session's, not
// ctx's: the session closes it. Signatures are not checked by the client
// (no Verify): the syncer checks id and signature of every event itself,
// once, and counts what fails.
func dial(ctx context.Context, url string, timeout time.Duration, log *slog.Logger) (*relayclient.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := relayclient.Dial(dctx, url, relayclient.Options{OnNotice: func(notice string) {
		log.Debug("peer notice", "notice", notice)
	}})
	if err != nil {
		return nil, fmt.Errorf("peers: connect: %w", err)
	}
	return conn, nil
}

// subscribe sends a REQ. The subscription lives until Close or the end of
// the connection.
func subscribe(ctx context.Context, conn *relayclient.Conn, filters nostr.Filters) (*relayclient.Sub, error) {
	sub, err := conn.Subscribe(ctx, filters)
	if err != nil {
		return nil, fmt.Errorf("peers: subscribe: %w", disconnected(err))
	}
	return sub, nil
}

// publish sends evt and waits for the peer's OK. A refusal is returned as
// the peer's reason, which classify reads.
func publish(ctx context.Context, conn *relayclient.Conn, evt *nostr.Event, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := conn.Publish(ctx, evt)
	if refused := (*relayclient.RefusedError)(nil); errors.As(err, &refused) {
		return errors.New(refused.Reason)
	}
	return disconnected(err)
}

// disconnected makes a lost connection ErrDisconnected (keeping why).
func disconnected(err error) error {
	if errors.Is(err, relayclient.ErrConnClosed) {
		return fmt.Errorf("%w: %w", ErrDisconnected, err)
	}
	return err
}
