package peers

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// The go-nostr client (v0.51.8) has two defects this file works around.
//
//  1. Its write loop dereferences the connection that its close handler
//     sets to nil: a write that meets the connection's end panics the
//     process (fixed upstream in nbd-wtf/go-nostr#183). So the syncer
//     never lets go-nostr write on its own: subscriptions get a context
//     the session's end does not cancel (a cancelled subscription sends
//     CLOSE from go-nostr's goroutine), they are unsubscribed only while
//     the session goes on, and the connection is closed by the session
//     after every goroutine that writes has returned. What remains is a
//     peer dropping the connection during one of our writes.
//  2. Publish returns nil when the connection drops before the OK: see
//     publish.

// dial connects to url. The connection's lifetime is the session's, not
// ctx's (see above): the caller closes it. Signatures are not checked by
// go-nostr (AssumeValid): the syncer checks id and signature of every
// event itself, once, and counts what fails.
func dial(ctx context.Context, url string, timeout time.Duration, log *slog.Logger) (*nostr.Relay, error) {
	conn := nostr.NewRelay(context.Background(), url, nostr.WithNoticeHandler(func(notice string) {
		log.Debug("peer notice", "notice", notice)
	}))
	conn.AssumeValid = true
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := conn.Connect(dctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("peers: connect: %w", err)
	}
	return conn, nil
}

// closeConn closes the connection. go-nostr's Close reads the connection
// field twice around the moment its own close handler sets it to nil;
// losing that race is a nil dereference, which must not take the process
// down from here.
func closeConn(conn *nostr.Relay, log *slog.Logger) {
	defer func() {
		if r := recover(); r != nil {
			log.Warn("go-nostr panicked closing a connection", "panic", r)
		}
	}()
	conn.Close()
}

// subscribe sends a REQ. The subscription lives until Unsub or the end of
// the connection, whatever happens to ctx (see above).
func subscribe(ctx context.Context, conn *nostr.Relay, filters nostr.Filters, label string) (*nostr.Subscription, error) {
	if !conn.IsConnected() {
		return nil, ErrDisconnected
	}
	sub, err := conn.Subscribe(context.WithoutCancel(ctx), filters, nostr.WithLabel(label))
	if err != nil {
		return nil, fmt.Errorf("peers: subscribe: %w", err)
	}
	return sub, nil
}

// publish sends evt and waits for the peer's OK. go-nostr returns nil
// when the connection drops before the OK arrives: that is a failure.
func publish(ctx context.Context, conn *nostr.Relay, evt *nostr.Event, timeout time.Duration) error {
	if !conn.IsConnected() {
		return ErrDisconnected
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := conn.Publish(ctx, *evt)
	if err == nil && !conn.IsConnected() {
		return ErrDisconnected
	}
	return err
}
