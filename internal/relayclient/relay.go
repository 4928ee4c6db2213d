package relayclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/nbd-wtf/go-nostr"
)

// ErrSubscriptionEnded is returned by Relay.Subscribe when the relay
// closes the subscription or the connection drops.
var ErrSubscriptionEnded = errors.New("relayclient: subscription ended")

// Relay is a relay reached over a websocket. It connects on first use
// and again after the connection drops, and answers NIP-42 challenges with
// its key: when the relay refuses a REQ or an EVENT with "auth-required:",
// it authenticates and tries once more. (Its client is wsConn, not
// go-nostr's Relay; see there why.)
type Relay struct {
	url string
	sk  string
	log *slog.Logger

	mu   sync.Mutex
	conn *wsConn
}

// New returns a Relay for url that authenticates with secretKey
// (hex: the agent's key). It does not connect yet.
func New(url, secretKey string, log *slog.Logger) *Relay {
	if log == nil {
		log = slog.Default()
	}
	return &Relay{url: url, sk: secretKey, log: log}
}

// URL is the relay's address.
func (w *Relay) URL() string { return w.url }

// Close closes the connection, if any, and waits for its reader.
func (w *Relay) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.conn == nil {
		return nil
	}
	err := w.conn.close()
	w.conn = nil
	return err
}

// connect returns the live connection, dialling a new one if needed.
func (w *Relay) connect(ctx context.Context) (*wsConn, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.conn != nil && w.conn.alive() {
		return w.conn, nil
	}
	if w.conn != nil {
		w.conn.close()
	}
	ctx, cancel := context.WithTimeout(ctx, okTimeout)
	defer cancel()
	c, err := dialWS(ctx, w.url, func(n string) {
		w.log.Debug("relayclient: relay notice", "relay", w.url, "notice", n)
	})
	if err != nil {
		return nil, err
	}
	w.conn = c
	return c, nil
}

// Publish sends evt and waits for the relay's OK.
func (w *Relay) Publish(ctx context.Context, evt *nostr.Event) error {
	c, err := w.connect(ctx)
	if err != nil {
		return err
	}
	err = c.publish(ctx, evt)
	if err != nil && strings.Contains(err.Error(), "auth-required:") {
		if err := c.auth(ctx, w.sk); err != nil {
			return err
		}
		err = c.publish(ctx, evt)
	}
	return err
}

// Query returns the stored events matching filter (until EOSE).
func (w *Relay) Query(ctx context.Context, filter nostr.Filter) ([]*nostr.Event, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	var out []*nostr.Event
	err := w.req(ctx, nostr.Filters{filter}, true, func(evt *nostr.Event) { out = append(out, evt) }, nil)
	return out, err
}

// Subscribe delivers stored and live events to fn until ctx ends or the
// subscription ends.
func (w *Relay) Subscribe(ctx context.Context, filters nostr.Filters, fn func(*nostr.Event), eose func()) error {
	return w.req(ctx, filters, false, fn, eose)
}

// req runs one REQ, authenticating and retrying once if the relay asks.
func (w *Relay) req(ctx context.Context, filters nostr.Filters, untilEOSE bool, fn func(*nostr.Event), eose func()) error {
	for attempt := 0; ; attempt++ {
		c, err := w.connect(ctx)
		if err != nil {
			return err
		}
		reason, err := drain(ctx, c, filters, untilEOSE, fn, eose)
		switch {
		case err != nil:
			return err
		case reason == "": // EOSE
			return nil
		case !strings.HasPrefix(reason, "auth-required:") || attempt > 0:
			return fmt.Errorf("%w: %s: %s", ErrSubscriptionEnded, w.url, reason)
		}
		// A relay sends its challenge before (or with) the refusal.
		if err := c.auth(ctx, w.sk); err != nil {
			return fmt.Errorf("relayclient: NIP-42 auth with %s: %w", w.url, err)
		}
	}
}

// drain subscribes and hands events to fn until EOSE (if untilEOSE: "",
// nil), the relay's CLOSED (its reason), the end of the connection
// (ErrSubscriptionEnded) or ctx's end (ctx's error).
func drain(ctx context.Context, c *wsConn, filters nostr.Filters, untilEOSE bool, fn func(*nostr.Event), onEOSE func()) (reason string, err error) {
	sub, end, err := c.subscribe(ctx, filters)
	if err != nil {
		return "", err
	}
	defer end()
	eose := sub.eose
	for {
		select {
		case evt := <-sub.events:
			fn(evt)
		case <-eose:
			if untilEOSE {
				return "", nil
			}
			eose = nil // keep reading live events
			if onEOSE != nil {
				onEOSE()
			}
		case reason := <-sub.closed:
			return reason, nil
		case <-c.ctx.Done():
			return "", fmt.Errorf("%w: %w", ErrSubscriptionEnded, context.Cause(c.ctx))
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}
