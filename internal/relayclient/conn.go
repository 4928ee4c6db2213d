package relayclient

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip42"
)

// wsConn is one websocket connection to a relay, speaking NIP-01 and
// NIP-42 over go-nostr's Connection and envelopes.
//
// It replaces go-nostr's Relay client. In v0.51.8 its writer goroutine
// dereferenced a Connection that its close path sets to nil (a panic in a
// library goroutine when a connection drops during a write;
// nbd-wtf/go-nostr#183). In the pinned v0.52.3 that goroutine still sets
// Relay.Connection to nil while close reads it (relay.go:175 against
// relay.go:576: the race detector reports it in every package whose tests
// dial with go-nostr's client), and Publish reports success when the
// connection drops before the OK.
//
// One reader goroutine per connection dispatches the relay's messages and
// one pings the relay (a silently dead connection is noticed); both end
// when the connection does, and close waits for them.
type wsConn struct {
	url  string
	conn *nostr.Connection

	wg     sync.WaitGroup // the reader and the pinger
	ctx    context.Context
	cancel context.CancelCauseFunc

	writeMu sync.Mutex
	mu      sync.Mutex
	subs    map[string]*wsSub
	oks     map[string]chan nostr.OKEnvelope
	chal    string
	nextSub atomic.Int64
}

// wsSub is one open REQ.
type wsSub struct {
	events chan *nostr.Event
	eose   chan struct{} // closed at EOSE
	closed chan string   // the relay's CLOSED reason (buffered)
	gone   chan struct{} // closed when the subscriber stops reading
	eosed  bool
}

func dialWS(ctx context.Context, url string, onNotice func(string)) (*wsConn, error) {
	conn, err := nostr.NewConnection(ctx, url, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("relayclient: connect %s: %w", url, err)
	}
	c := &wsConn{url: nostr.NormalizeURL(url), conn: conn,
		subs: map[string]*wsSub{}, oks: map[string]chan nostr.OKEnvelope{}}
	c.ctx, c.cancel = context.WithCancelCause(context.Background())
	c.wg.Go(func() { c.read(onNotice) })
	c.wg.Go(c.keepalive)
	return c, nil
}

// Timeouts of a websocket link.
const (
	okTimeout    = 15 * time.Second // an EVENT or AUTH without OK fails after this
	queryTimeout = time.Minute      // a query without EOSE fails after this
	pingEvery    = 30 * time.Second // a connection that does not answer a ping is dropped
)

// keepalive pings the relay until the connection ends; three missed
// pongs in a row (go-nostr's Ping waits 800 ms) drop the connection.
func (c *wsConn) keepalive() {
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
			c.cancel(fmt.Errorf("ping %s: %w", c.url, err))
			c.conn.Close()
			return
		}
	}
}

// alive reports whether the connection is still up.
func (c *wsConn) alive() bool { return c.ctx.Err() == nil }

// close closes the connection and waits for the reader. A connection the
// peer already dropped closes without error: there is nothing left to
// close.
func (c *wsConn) close() error {
	lost := !c.alive()
	err := c.conn.Close()
	c.cancel(errors.New("closed"))
	c.wg.Wait()
	if lost || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// read dispatches incoming messages until the connection fails.
func (c *wsConn) read(onNotice func(string)) {
	parser := nostr.NewMessageParser()
	var buf bytes.Buffer
	for {
		buf.Reset()
		if err := c.conn.ReadMessage(c.ctx, &buf); err != nil {
			c.cancel(fmt.Errorf("connection to %s lost: %w", c.url, err))
			return
		}
		env, err := parser.ParseMessage(buf.String())
		if err != nil {
			continue
		}
		c.dispatch(env, onNotice)
	}
}

func (c *wsConn) dispatch(env nostr.Envelope, onNotice func(string)) {
	switch env := env.(type) {
	case *nostr.EventEnvelope:
		if env.SubscriptionID != nil {
			c.deliver(*env.SubscriptionID, &env.Event)
		}
	case *nostr.EOSEEnvelope:
		c.mu.Lock()
		if s := c.subs[string(*env)]; s != nil && !s.eosed {
			s.eosed = true
			close(s.eose)
		}
		c.mu.Unlock()
	case *nostr.ClosedEnvelope:
		c.mu.Lock()
		if s := c.subs[env.SubscriptionID]; s != nil {
			delete(c.subs, env.SubscriptionID)
			s.closed <- cmp.Or(env.Reason, "closed")
		}
		c.mu.Unlock()
	case *nostr.OKEnvelope:
		c.mu.Lock()
		if ch := c.oks[env.EventID]; ch != nil {
			delete(c.oks, env.EventID)
			ch <- *env
		}
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

// deliver hands an event to its subscription; the reader waits for the
// subscriber (back-pressure), unless it has gone or the connection died.
func (c *wsConn) deliver(id string, evt *nostr.Event) {
	c.mu.Lock()
	s := c.subs[id]
	c.mu.Unlock()
	if s == nil {
		return
	}
	select {
	case s.events <- evt:
	case <-s.gone:
	case <-c.ctx.Done():
	}
}

func (c *wsConn) write(ctx context.Context, env nostr.Envelope) error {
	b, err := env.MarshalJSON()
	if err != nil {
		return err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.conn.WriteMessage(ctx, b); err != nil {
		c.cancel(fmt.Errorf("write to %s: %w", c.url, err))
		return err
	}
	return nil
}

// send writes an EVENT or AUTH carrying evt and waits for the relay's OK:
// nil if accepted, an error with the relay's reason if refused, or the
// connection's or ctx's end.
func (c *wsConn) send(ctx context.Context, env nostr.Envelope, id string) error {
	ctx, cancel := context.WithTimeout(ctx, okTimeout)
	defer cancel()
	ch := make(chan nostr.OKEnvelope, 1)
	c.mu.Lock()
	c.oks[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.oks, id)
		c.mu.Unlock()
	}()
	if err := c.write(ctx, env); err != nil {
		return err
	}
	select {
	case ok := <-ch:
		if !ok.OK {
			return fmt.Errorf("%s: %s", c.url, ok.Reason)
		}
		return nil
	case <-c.ctx.Done():
		return context.Cause(c.ctx)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *wsConn) publish(ctx context.Context, evt *nostr.Event) error {
	return c.send(ctx, &nostr.EventEnvelope{Event: *evt}, evt.ID)
}

// auth answers the latest challenge (NIP-42) as sk's key.
func (c *wsConn) auth(ctx context.Context, sk string) error {
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

// subscribe opens a REQ; end must be called when done reading.
func (c *wsConn) subscribe(ctx context.Context, filters nostr.Filters) (s *wsSub, end func(), err error) {
	id := "asm:" + strconv.FormatInt(c.nextSub.Add(1), 10)
	s = &wsSub{events: make(chan *nostr.Event), eose: make(chan struct{}), closed: make(chan string, 1), gone: make(chan struct{})}
	c.mu.Lock()
	c.subs[id] = s
	c.mu.Unlock()
	end = func() {
		close(s.gone)
		c.mu.Lock()
		_, open := c.subs[id]
		delete(c.subs, id)
		c.mu.Unlock()
		if open && c.alive() {
			wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), okTimeout)
			defer cancel()
			closeEnv := nostr.CloseEnvelope(id)
			c.write(wctx, &closeEnv)
		}
	}
	if err := c.write(ctx, &nostr.ReqEnvelope{SubscriptionID: id, Filters: filters}); err != nil {
		end()
		return nil, nil, err
	}
	return s, end, nil
}
