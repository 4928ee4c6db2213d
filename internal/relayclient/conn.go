package relayclient

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip42"

	"github.com/agentnode/agentnode/internal/netguard"
	"github.com/agentnode/agentnode/internal/redact"
)

// Conn is one websocket connection to a relay, speaking NIP-01 and NIP-42
// over a coder/websocket connection (ws.go) and go-nostr's envelopes. It does not reconnect: when
// the connection ends, Done is closed and every call fails; Relay (or the
// caller, as agentd/peers does) dials again.
//
// It replaces go-nostr's Relay client. In v0.51.8 that client's writer
// goroutine dereferenced a Connection its close path sets to nil (a panic
// in a library goroutine when a connection drops during a write;
// nbd-wtf/go-nostr#183). In the pinned v0.52.3 the goroutine still sets
// Relay.Connection to nil while Close reads it (relay.go:175 against
// relay.go:576: the race detector reports it in every package whose tests
// dial with go-nostr's client), and Publish reports success when the
// connection drops before the OK.
//
// One reader goroutine per connection dispatches the relay's messages and
// one pings the relay (a silently dead connection is noticed); each
// subscription has one more that hands its events on in order. They all
// end when the connection does, and Close waits for them. Every write has
// a deadline (writeTimeout): a relay that stops reading ends the
// connection instead of blocking the writer.
//
// A Conn is safe for concurrent use.
type Conn struct {
	url          string
	conn         *wsConn
	verify       bool
	writeTimeout time.Duration

	wg     sync.WaitGroup // the reader, the pinger and every Sub's pump
	ctx    context.Context
	cancel context.CancelCauseFunc

	writeMu sync.Mutex
	mu      sync.Mutex // guards subs, oks, chal; and wg.Add against Close
	subs    map[string]*Sub
	oks     map[string][]chan nostr.OKEnvelope // by event id: the same event may be in flight twice
	chal    string
	nextSub atomic.Int64
	negs    map[string]*NegSession // open NIP-77 sessions by id (neg.go); guarded by mu

	bytesIn, bytesOut atomic.Int64 // websocket payload bytes read and written (Traffic)
}

// Options tune Dial. The zero value is fine.
type Options struct {
	// Verify drops events whose signature does not verify or that match
	// none of their subscription's filters (a client that trusts the
	// relay's answers wants this; one that counts bad events, as
	// agentd/peers does, checks them itself).
	Verify bool
	// OnNotice receives the relay's NOTICE messages (from the reader
	// goroutine: it must not block).
	OnNotice func(string)
	// WriteTimeout bounds every write (default 10 s): a relay that does
	// not take a message within it has its connection ended.
	WriteTimeout time.Duration
	// Header is sent with the websocket handshake (tests set
	// X-Forwarded-For with it); nil for none.
	Header http.Header
	// Guard, if set, checks every address the handshake connects to:
	// a relay URL a stranger chose (a tag's hint, a relay list, a
	// service URI) must pass the node's policy, or the dial fails with a
	// *netguard.BlockedError. Nil dials anything: the operator named
	// the relay (--peer, the CLI, bench).
	Guard *netguard.Policy
}

// Errors of a connection and its calls.
var (
	// ErrConnClosed: the connection ended (dropped by the relay or the
	// network, or closed); the wrapping error says why.
	ErrConnClosed = errors.New("relayclient: connection closed")
	// ErrSubscriptionEnded is returned by Relay.Subscribe, Relay.Query
	// and Conn.Query when the relay closes the subscription or the
	// connection drops.
	ErrSubscriptionEnded = errors.New("relayclient: subscription ended")
	// errPingSlow: a ping's pong did not come in time.
	errPingSlow = errors.New("ping took too long")
)

// RefusedError is a relay's OK false to an EVENT or AUTH. Reason is the
// relay's message verbatim, with its NIP-01 prefix ("invalid: ...").
type RefusedError struct {
	URL, Reason string
}

func (e *RefusedError) Error() string { return e.URL + ": " + e.Reason }

// ClosedError is a relay's CLOSED for a subscription. It is an
// ErrSubscriptionEnded.
type ClosedError struct {
	URL, Reason string
}

func (e *ClosedError) Error() string {
	return ErrSubscriptionEnded.Error() + ": " + e.URL + ": " + e.Reason
}

func (e *ClosedError) Is(target error) bool { return target == ErrSubscriptionEnded }

// Timeouts of a websocket link.
const (
	okTimeout    = 15 * time.Second // an EVENT or AUTH without OK fails after this
	queryTimeout = time.Minute      // a query without EOSE fails after this
	writeTimeout = 10 * time.Second // a write the relay does not take ends the connection
	pingEvery    = 30 * time.Second // a connection that does not answer a ping is dropped
	subQueue     = 1024             // events a subscription holds before the reader waits for it
)

// Dial connects to url within ctx. The connection's life is not ctx's:
// Close ends it.
func Dial(ctx context.Context, url string, opt Options) (*Conn, error) {
	conn, err := dialWS(ctx, url, opt.Header, opt.Guard)
	if err != nil {
		return nil, redact.Error(fmt.Errorf("relayclient: connect %s: %w", url, err)) // the URL may carry credentials
	}
	c := &Conn{url: nostr.NormalizeURL(url), conn: conn, verify: opt.Verify, writeTimeout: cmp.Or(opt.WriteTimeout, writeTimeout),
		subs: map[string]*Sub{}, oks: map[string][]chan nostr.OKEnvelope{}, negs: map[string]*NegSession{}}
	c.ctx, c.cancel = context.WithCancelCause(context.Background())
	onNotice := opt.OnNotice
	if onNotice == nil {
		onNotice = func(string) {}
	}
	c.wg.Go(func() { c.read(onNotice) })
	c.wg.Go(c.keepalive)
	return c, nil
}

// URL is the relay's address, normalized.
func (c *Conn) URL() string { return c.url }

// Done is closed when the connection ends.
func (c *Conn) Done() <-chan struct{} { return c.ctx.Done() }

// Err is nil while the connection is up, then an ErrConnClosed saying why
// it ended.
func (c *Conn) Err() error { return context.Cause(c.ctx) }

// alive reports whether the connection is still up.
func (c *Conn) alive() bool { return c.ctx.Err() == nil }

// end ends the connection (once: the first cause stays).
func (c *Conn) end(format string, args ...any) {
	c.cancel(fmt.Errorf("%w: "+format, append([]any{ErrConnClosed}, args...)...))
}

// keepalive pings the relay until the connection ends; three missed
// pongs in a row drop the connection.
func (c *Conn) keepalive() {
	t := time.NewTicker(pingEvery)
	defer t.Stop()
	missed := 0
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		if err := c.conn.Ping(c.ctx); err == nil {
			missed = 0
		} else if missed++; missed == 3 {
			c.end("ping %s: %w", c.url, err)
			c.conn.Close()
			return
		}
	}
}

// Close closes the connection and waits for its goroutines. A connection
// the relay already dropped closes without error: there is nothing left
// to close.
func (c *Conn) Close() error {
	lost := !c.alive()
	err := c.conn.Close()
	c.mu.Lock() // no Sub starts its pump after this (see Subscribe)
	c.end("closed")
	c.mu.Unlock()
	c.wg.Wait()
	if lost || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// read dispatches incoming messages until the connection fails.
func (c *Conn) read(onNotice func(string)) {
	parser := nostr.NewMessageParser()
	var buf bytes.Buffer
	for {
		buf.Reset()
		if err := c.conn.ReadMessage(c.ctx, &buf); err != nil {
			c.end("connection to %s lost: %w", c.url, err)
			return
		}
		c.bytesIn.Add(int64(buf.Len()))
		env, err := parser.ParseMessage(buf.String())
		if err != nil {
			c.dispatchNeg(buf.Bytes()) // NIP-77 labels are unknown to the parser
			continue
		}
		c.dispatch(env, onNotice)
	}
}

func (c *Conn) dispatch(env nostr.Envelope, onNotice func(string)) {
	switch env := env.(type) {
	case *nostr.EventEnvelope:
		if env.SubscriptionID != nil {
			c.deliver(*env.SubscriptionID, &env.Event)
		}
	case *nostr.EOSEEnvelope:
		c.mu.Lock()
		s := c.subs[string(*env)]
		first := s != nil && !s.eosed
		if first {
			s.eosed = true
		}
		c.mu.Unlock()
		if first {
			s.enqueue(c.ctx, nil) // after the stored events: the pump closes EOSE in order
		}
	case *nostr.ClosedEnvelope:
		c.mu.Lock()
		if s := c.subs[env.SubscriptionID]; s != nil {
			delete(c.subs, env.SubscriptionID)
			s.closed <- cmp.Or(env.Reason, "closed")
		}
		c.mu.Unlock()
	case *nostr.OKEnvelope:
		c.mu.Lock()
		for _, ch := range c.oks[env.EventID] {
			ch <- *env // buffered, one send each
		}
		delete(c.oks, env.EventID)
		c.mu.Unlock()
	case *nostr.AuthEnvelope:
		if env.Challenge != nil {
			c.mu.Lock()
			c.chal = *env.Challenge
			c.mu.Unlock()
		}
	case *nostr.NoticeEnvelope:
		onNotice(string(*env))
	}
}

// deliver hands an event to its subscription's queue (with Verify, only
// a genuine event that matches the subscription).
func (c *Conn) deliver(id string, evt *nostr.Event) {
	c.mu.Lock()
	s := c.subs[id]
	c.mu.Unlock()
	if s == nil {
		return
	}
	if c.verify && !s.accepts(evt) {
		return
	}
	s.enqueue(c.ctx, evt)
}

// write sends one message within the write timeout. A write that fails ends
// the connection (the websocket library closes it on a write timeout).
func (c *Conn) write(ctx context.Context, env nostr.Envelope) error {
	b, err := env.MarshalJSON()
	if err != nil {
		return err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, c.writeTimeout) // after the lock: waiting for it is not writing
	defer cancel()
	if !c.alive() {
		return c.Err()
	}
	if err := c.conn.WriteMessage(ctx, b); err != nil {
		c.end("write to %s: %w", c.url, err)
		return c.Err()
	}
	c.bytesOut.Add(int64(len(b)))
	return nil
}

// send writes an EVENT or AUTH carrying evt and waits for the relay's OK:
// nil if accepted, a *RefusedError if refused, or the connection's or
// ctx's end.
func (c *Conn) send(ctx context.Context, env nostr.Envelope, id string) error {
	ctx, cancel := context.WithTimeout(ctx, okTimeout)
	defer cancel()
	ch := make(chan nostr.OKEnvelope, 1)
	c.mu.Lock()
	c.oks[id] = append(c.oks[id], ch)
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		if rest := slices.DeleteFunc(c.oks[id], func(w chan nostr.OKEnvelope) bool { return w == ch }); len(rest) > 0 {
			c.oks[id] = rest
		} else {
			delete(c.oks, id)
		}
		c.mu.Unlock()
	}()
	if err := c.write(ctx, env); err != nil {
		return err
	}
	select {
	case ok := <-ch:
		if !ok.OK {
			return &RefusedError{URL: c.url, Reason: ok.Reason}
		}
		return nil
	case <-c.ctx.Done():
		return c.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Publish sends evt and waits for the relay's OK (at most okTimeout): nil
// if the relay accepted it, a *RefusedError with its reason if not, else
// the connection's end (ErrConnClosed) or ctx's. Unlike go-nostr's
// client, a connection that drops before the OK is a failure.
func (c *Conn) Publish(ctx context.Context, evt *nostr.Event) error {
	return c.send(ctx, &nostr.EventEnvelope{Event: *evt}, evt.ID)
}

// Auth answers the relay's latest challenge (NIP-42) as sk's key.
func (c *Conn) Auth(ctx context.Context, sk string) error {
	c.mu.Lock()
	chal := c.chal
	c.mu.Unlock()
	if chal == "" {
		return fmt.Errorf("relayclient: %s asked for AUTH but sent no challenge", c.url)
	}
	pk, err := nostr.GetPublicKey(sk)
	if err != nil {
		return err
	}
	evt := nip42.CreateUnsignedAuthEvent(chal, pk, c.url)
	if err := evt.Sign(sk); err != nil {
		return err
	}
	return c.send(ctx, &nostr.AuthEnvelope{Event: evt}, evt.ID)
}

// Subscribe sends a REQ. The subscription lives until Sub.Close, the
// relay's CLOSED or the connection's end, whatever happens to ctx (which
// bounds the REQ's write only); Close must be called when done reading.
func (c *Conn) Subscribe(ctx context.Context, filters nostr.Filters) (*Sub, error) {
	id := "rc:" + strconv.FormatInt(c.nextSub.Add(1), 10)
	s := newSub(c, id, filters)
	c.mu.Lock()
	if !c.alive() {
		c.mu.Unlock()
		return nil, c.Err()
	}
	c.subs[id] = s
	c.wg.Add(1) // before Close's Wait: Close ends the connection under mu
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		s.pump()
	}()
	if err := c.write(ctx, &nostr.ReqEnvelope{SubscriptionID: id, Filters: filters}); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Query returns the stored events matching filters, up to the relay's
// EOSE: the relay's CLOSED is a *ClosedError, a dropped connection an
// ErrSubscriptionEnded (wrapping ErrConnClosed), ctx's end ctx's error.
// Unlike go-nostr's QuerySync, none of them returns what arrived so far.
func (c *Conn) Query(ctx context.Context, filters nostr.Filters) ([]*nostr.Event, error) {
	got := newCollector(filters)
	reason, err := drain(ctx, c, filters, true, got.add, nil)
	if err != nil {
		return nil, err
	}
	if reason != "" {
		return nil, &ClosedError{URL: c.url, Reason: reason}
	}
	return got.out, nil
}

// collector keeps a query's events up to its cap (queryCap), each id
// once: a relay may send one event twice before its EOSE (stored, and
// live when it was committed while the query ran; NIP-01 leaves
// deduplication to the client).
type collector struct {
	out  []*nostr.Event
	seen map[string]struct{}
	most int
}

func newCollector(filters nostr.Filters) *collector {
	return &collector{seen: map[string]struct{}{}, most: queryCap(filters)}
}

// add keeps evt unless the cap is reached or its id was kept already.
func (c *collector) add(evt *nostr.Event) {
	if _, dup := c.seen[evt.ID]; dup || len(c.out) >= c.most {
		return
	}
	c.seen[evt.ID] = struct{}{}
	c.out = append(c.out, evt)
}

// MaxQueryEvents is the most events a Query keeps when its filters set no
// limit; a relay that sends more (or ignores the limits) is read on to its
// EOSE, but the rest is not kept.
const MaxQueryEvents = 50_000

// queryCap is how many events a Query over filters keeps: the sum of
// their limits, or MaxQueryEvents when one has none.
func queryCap(filters nostr.Filters) int {
	n := 0
	for _, f := range filters {
		if f.Limit <= 0 {
			return MaxQueryEvents
		}
		n += f.Limit
	}
	return min(n, MaxQueryEvents)
}

// drain subscribes and hands events to fn until EOSE (if untilEOSE: "",
// nil), the relay's CLOSED (its reason), the end of the connection
// (ErrSubscriptionEnded) or ctx's end (ctx's error).
func drain(ctx context.Context, c *Conn, filters nostr.Filters, untilEOSE bool, fn func(*nostr.Event), onEOSE func()) (reason string, err error) {
	sub, err := c.Subscribe(ctx, filters)
	if err != nil {
		return "", err
	}
	defer sub.Close()
	eose := sub.EOSE
	for {
		select {
		case evt := <-sub.Events:
			fn(evt)
		case <-eose:
			if untilEOSE {
				return "", nil
			}
			eose = nil // keep reading live events
			if onEOSE != nil {
				onEOSE()
			}
		case reason := <-sub.Closed:
			return reason, nil
		case <-c.Done():
			return "", fmt.Errorf("%w: %w", ErrSubscriptionEnded, c.Err())
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}
