package relayclient

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip77"
)

// NegError is a relay's NEG-ERR for a NIP-77 session. Reason is the
// relay's message verbatim ("blocked: ...", "closed: ...").
type NegError struct {
	URL, Reason string
}

func (e *NegError) Error() string { return e.URL + ": NEG-ERR: " + e.Reason }

// NegSession is one NIP-77 (negentropy) session on a Conn: the caller
// drives the reconciliation (go-nostr's nip77/negentropy) and the session
// carries its messages. It is used by one goroutine at a time.
type NegSession struct {
	c  *Conn
	id string
	in chan negFrame // NEG-MSG payloads or a NEG-ERR, in order
}

type negFrame struct {
	msg string
	err *NegError
}

// Traffic is the websocket payload the connection has read and written so
// far, in bytes (frame headers and TLS excluded).
func (c *Conn) Traffic() (in, out int64) { return c.bytesIn.Load(), c.bytesOut.Load() }

// NegOpen opens a NIP-77 session over filter with the client's first
// message (negentropy.Negentropy.Start).
func (c *Conn) NegOpen(ctx context.Context, filter nostr.Filter, first string) (*NegSession, error) {
	s := &NegSession{c: c, id: "neg:" + strconv.FormatInt(c.nextSub.Add(1), 10), in: make(chan negFrame, 4)}
	c.mu.Lock()
	if !c.alive() {
		c.mu.Unlock()
		return nil, c.Err()
	}
	c.negs[s.id] = s
	c.mu.Unlock()
	if err := c.write(ctx, &nip77.OpenEnvelope{SubscriptionID: s.id, Filter: filter, Message: first}); err != nil {
		s.forget()
		return nil, err
	}
	return s, nil
}

// Next waits for the relay's next NEG-MSG and returns its payload; a
// NEG-ERR is a *NegError (the session is then over), a dropped connection
// ErrConnClosed, ctx's end ctx's error.
func (s *NegSession) Next(ctx context.Context) (string, error) {
	select {
	case f := <-s.in:
		if f.err != nil {
			s.forget()
			return "", f.err
		}
		return f.msg, nil
	case <-s.c.ctx.Done():
		return "", s.c.Err()
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Send sends the client's next message.
func (s *NegSession) Send(ctx context.Context, msg string) error {
	return s.c.write(ctx, &nip77.MessageEnvelope{SubscriptionID: s.id, Message: msg})
}

// Close sends NEG-CLOSE (if the connection is alive) and forgets the session.
func (s *NegSession) Close(ctx context.Context) error {
	s.forget()
	if !s.c.alive() {
		return nil
	}
	return s.c.write(ctx, &nip77.CloseEnvelope{SubscriptionID: s.id})
}

func (s *NegSession) forget() {
	s.c.mu.Lock()
	delete(s.c.negs, s.id)
	s.c.mu.Unlock()
}

// dispatchNeg hands a NEG-MSG or NEG-ERR (some relays spell it NEG-ERROR)
// to its session; anything else is dropped. A session that does not keep
// up with its relay (more than its queue, which a well-behaved relay never
// fills: it answers one message with one) is failed.
func (c *Conn) dispatchNeg(raw []byte) {
	var msg []string
	if json.Unmarshal(raw, &msg) != nil || len(msg) != 3 {
		return
	}
	c.mu.Lock()
	s := c.negs[msg[1]]
	c.mu.Unlock()
	if s == nil {
		return
	}
	var f negFrame
	switch msg[0] {
	case "NEG-MSG":
		f.msg = msg[2]
	case "NEG-ERR", "NEG-ERROR":
		f.err = &NegError{URL: c.url, Reason: msg[2]}
	default:
		return
	}
	select {
	case s.in <- f:
	default:
		s.forget()
	}
}

// ErrNegUnsupported is returned by callers that find a relay does not
// answer NIP-77.
var ErrNegUnsupported = errors.New("relay does not speak NIP-77 (negentropy)")
