package relayclient

import (
	"context"
	"sync"

	"github.com/nbd-wtf/go-nostr"
)

// Sub is one open REQ on a Conn.
//
// Its events come in the order the relay sent them, EOSE is closed only
// once every stored event before it has been received from Events, and a
// subscriber that does not read holds up nothing else on the connection
// until subQueue of its events wait (then the connection's reader waits
// for it: back-pressure, not an unbounded buffer).
type Sub struct {
	// Events carries the stored events, then live ones.
	Events <-chan *nostr.Event
	// EOSE is closed at the relay's EOSE, after the stored events.
	EOSE <-chan struct{}
	// Closed receives the relay's CLOSED reason, if it sends one.
	Closed <-chan string

	c       *Conn
	id      string
	filters nostr.Filters
	eosed   bool // under c.mu

	queue  chan *nostr.Event // the reader to the pump; nil is the EOSE mark
	events chan *nostr.Event
	eose   chan struct{}
	closed chan string   // buffered: the reader never waits on it
	gone   chan struct{} // closed by Close
	pumped chan struct{} // closed when the pump returns
	once   sync.Once
}

func newSub(c *Conn, id string, filters nostr.Filters) *Sub {
	s := &Sub{c: c, id: id, filters: filters,
		queue: make(chan *nostr.Event, subQueue), events: make(chan *nostr.Event),
		eose: make(chan struct{}), closed: make(chan string, 1),
		gone: make(chan struct{}), pumped: make(chan struct{})}
	s.Events, s.EOSE, s.Closed = s.events, s.eose, s.closed
	return s
}

// accepts reports whether evt is genuine and asked for.
func (s *Sub) accepts(evt *nostr.Event) bool {
	if !s.filters.Match(evt) || !evt.CheckID() {
		return false
	}
	ok, err := evt.CheckSignature()
	return ok && err == nil
}

// enqueue is the reader's side: it waits while the queue is full, unless
// the subscriber has gone or the connection ended (connCtx).
func (s *Sub) enqueue(connCtx context.Context, evt *nostr.Event) {
	select {
	case s.queue <- evt:
	case <-s.gone:
	case <-connCtx.Done():
	}
}

// pump hands queued events to Events, and closes EOSE at its mark, until
// the subscriber goes or the connection ends.
func (s *Sub) pump() {
	defer close(s.pumped)
	done := s.c.ctx.Done()
	for {
		var evt *nostr.Event
		select {
		case evt = <-s.queue:
		case <-s.gone:
			return
		case <-done:
			return
		}
		if evt == nil {
			close(s.eose)
			continue
		}
		select {
		case s.events <- evt:
		case <-s.gone:
			return
		case <-done:
			return
		}
	}
}

// Close ends the subscription: it sends CLOSE if the relay has not closed
// it and the connection is up, and waits for the pump. It may be called
// more than once.
func (s *Sub) Close() {
	s.once.Do(func() {
		close(s.gone)
		c := s.c
		c.mu.Lock()
		_, open := c.subs[s.id]
		delete(c.subs, s.id)
		c.mu.Unlock()
		<-s.pumped
		if open && c.alive() {
			ctx, cancel := context.WithTimeout(context.Background(), okTimeout)
			defer cancel()
			env := nostr.CloseEnvelope(s.id)
			c.write(ctx, &env)
		}
	})
}
