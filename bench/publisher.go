package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/nbd-wtf/go-nostr"
)

// errNoOK marks an event whose OK never came (the connection failed).
var errNoOK = errors.New("no OK received")

// publishMany sends evts to url over conns websockets (event i on
// connection i mod conns) with at most window unanswered on each, and
// records each event's EVENT->OK latency and refusal by index. It counts
// only explicit OK answers (a dropped connection is an error for every
// unanswered event). The client is bare (fasthttp/websocket, pre-encoded
// frames) so that its own cost stays small next to the relay's.
func publishMany(ctx context.Context, url string, evts []*nostr.Event, conns, window int) (lat []time.Duration, errs []error, elapsed time.Duration, err error) {
	lat, errs = make([]time.Duration, len(evts)), make([]error, len(evts))
	frames := make([][]byte, len(evts))
	for i, e := range evts {
		frames[i], _ = nostr.EventEnvelope{Event: *e}.MarshalJSON()
		errs[i] = errNotSent
	}
	pubs := make([]*publisher, 0, conns)
	urls := strings.Split(url, ",") // several instances of one relay: connections round-robin
	for c := range conns {
		u := urls[c%len(urls)]
		ws, _, derr := websocket.DefaultDialer.DialContext(ctx, u, nil)
		if derr != nil {
			for _, p := range pubs {
				p.conn.Close()
			}
			return lat, errs, 0, fmt.Errorf("dial %s: %w", u, derr)
		}
		pubs = append(pubs, newPublisher(ws, c, conns, evts, frames, window, lat, errs))
	}
	start := time.Now()
	var wg sync.WaitGroup
	for _, p := range pubs {
		wg.Go(func() { p.run(ctx) })
	}
	wg.Wait()
	return lat, errs, time.Since(start), ctx.Err()
}

// publisher is one connection of publishMany: its share of the events,
// sent by one goroutine and answered on another.
type publisher struct {
	conn   *websocket.Conn
	idx    []int // indexes of its events, in sending order
	evts   []*nostr.Event
	frames [][]byte
	slots  chan struct{}
	lat    []time.Duration
	errs   []error

	mu    sync.Mutex
	sent  map[string]int       // event id -> index, while unanswered
	start map[string]time.Time // event id -> when its frame was written
}

func newPublisher(ws *websocket.Conn, c, conns int, evts []*nostr.Event, frames [][]byte, window int, lat []time.Duration, errs []error) *publisher {
	p := &publisher{conn: ws, evts: evts, frames: frames, slots: make(chan struct{}, window),
		lat: lat, errs: errs, sent: map[string]int{}, start: map[string]time.Time{}}
	for i := c; i < len(evts); i += conns {
		p.idx = append(p.idx, i)
	}
	return p
}

// run sends every event and reads every answer, then closes the socket.
func (p *publisher) run(ctx context.Context) {
	defer p.conn.Close()
	done := make(chan struct{})
	go func() { defer close(done); p.read() }()
	p.write(ctx)
	<-done
}

// write sends the events, waiting for a free slot before each.
func (p *publisher) write(ctx context.Context) {
	for _, i := range p.idx {
		select {
		case p.slots <- struct{}{}:
		case <-ctx.Done():
			p.conn.Close()
			return
		}
		p.mu.Lock()
		p.sent[p.evts[i].ID], p.start[p.evts[i].ID] = i, time.Now()
		p.mu.Unlock()
		if err := p.conn.WriteMessage(websocket.TextMessage, p.frames[i]); err != nil {
			return
		}
	}
}

// read collects OK answers until every event is answered or reading fails.
func (p *publisher) read() {
	for answered := 0; answered < len(p.idx); {
		p.conn.SetReadDeadline(time.Now().Add(okTimeout))
		_, msg, err := p.conn.ReadMessage()
		if err != nil {
			p.failUnanswered()
			return
		}
		if !bytes.HasPrefix(msg, []byte(`["OK",`)) {
			continue
		}
		if ok, isOK := parseMessage(msg).(*nostr.OKEnvelope); isOK && p.answer(ok) {
			answered++
			<-p.slots
		}
	}
}

// answer records one OK; false if it is for no event in flight.
func (p *publisher) answer(ok *nostr.OKEnvelope) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	i, found := p.sent[ok.EventID]
	if !found {
		return false
	}
	p.lat[i] = time.Since(p.start[ok.EventID])
	p.errs[i] = nil
	if !ok.OK {
		p.errs[i] = fmt.Errorf("refused: %s", ok.Reason)
	}
	delete(p.sent, ok.EventID)
	return true
}

// failUnanswered marks every event in flight as never answered.
func (p *publisher) failUnanswered() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, i := range p.sent {
		p.errs[i] = errNoOK
	}
}
