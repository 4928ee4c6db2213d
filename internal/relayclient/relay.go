package relayclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// Relay is a relay reached over a websocket. It connects on first use
// and again after the connection drops, and answers NIP-42 challenges with
// its key: when the relay refuses a REQ or an EVENT with "auth-required:",
// it authenticates and tries once more. (Its client is Conn, not
// go-nostr's Relay; see there why.)
type Relay struct {
	url string
	sk  string
	log *slog.Logger
	opt Options // of every dial

	mu       sync.Mutex
	conn     *Conn
	fails    int       // dials failed in a row
	lastFail time.Time // the last of them
}

// New returns a Relay for url that authenticates with secretKey
// (hex: the agent's key). It does not connect yet.
func New(url, secretKey string, log *slog.Logger) *Relay {
	return NewWith(url, secretKey, log, Options{})
}

// NewWith is New with the Options of every dial (a Guard for a relay a
// stranger named); a nil OnNotice logs notices at debug level.
func NewWith(url, secretKey string, log *slog.Logger, opt Options) *Relay {
	if log == nil {
		log = slog.Default()
	}
	if opt.OnNotice == nil {
		opt.OnNotice = func(n string) { log.Debug("relayclient: relay notice", "relay", url, "notice", n) }
	}
	return &Relay{url: url, sk: secretKey, log: log, opt: opt}
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
	err := w.conn.Close()
	w.conn = nil
	return err
}

// connect returns the live connection, dialling a new one if needed. A
// dial after failed ones waits its turn (redialBackoff, bounded by ctx):
// callers that retry in a loop do not hammer a relay that is down.
func (w *Relay) connect(ctx context.Context) (*Conn, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.conn != nil && w.conn.alive() {
		return w.conn, nil
	}
	if w.conn != nil {
		w.conn.Close()
		w.conn = nil
	}
	if w.fails > 0 && !Sleep(ctx, redialBackoff.Delay(w.fails-1)-time.Since(w.lastFail)) {
		return nil, ctx.Err()
	}
	ctx, cancel := context.WithTimeout(ctx, okTimeout)
	defer cancel()
	c, err := Dial(ctx, w.url, w.opt)
	if err != nil {
		w.fails++
		w.lastFail = time.Now()
		return nil, err
	}
	w.fails = 0
	w.conn = c
	return c, nil
}

// Publish sends evt and waits for the relay's OK.
func (w *Relay) Publish(ctx context.Context, evt *nostr.Event) error {
	c, err := w.connect(ctx)
	if err != nil {
		return err
	}
	err = c.Publish(ctx, evt)
	if refused := (*RefusedError)(nil); errors.As(err, &refused) && strings.HasPrefix(refused.Reason, "auth-required:") {
		if err := c.Auth(ctx, w.sk); err != nil {
			return err
		}
		err = c.Publish(ctx, evt)
	}
	return err
}

// Query returns the stored events matching filter (until EOSE), at most
// its limit (MaxQueryEvents without one).
func (w *Relay) Query(ctx context.Context, filter nostr.Filter) ([]*nostr.Event, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	got := newCollector(nostr.Filters{filter})
	err := w.req(ctx, nostr.Filters{filter}, true, got.add, nil)
	return got.out, err
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
		if err := c.Auth(ctx, w.sk); err != nil {
			return fmt.Errorf("relayclient: NIP-42 auth with %s: %w", w.url, err)
		}
	}
}
