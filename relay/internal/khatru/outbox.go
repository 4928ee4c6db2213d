package khatru

// PATCH (agentnode): a bounded outbound queue per connection, drained by the
// connection's own writer goroutine with a write deadline. Upstream khatru
// writes every message synchronously under a mutex with no deadline, so one
// client that stops reading blocks whoever writes to it, the live broadcast
// (and with it the ingest path) included. See PATCHES.md.

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/nbd-wtf/go-nostr"
)

// frame is one websocket message waiting to be written. Its payload is
// the concatenation of parts, so that a broadcast event's JSON is encoded
// once and shared by every subscription's frame.
type frame struct {
	opcode byte
	parts  [3][]byte
}

func (f frame) size() int { return len(f.parts[0]) + len(f.parts[1]) + len(f.parts[2]) }

// outbox is a connection's bounded queue of frames. Its writer goroutine
// runs only while there is something to write (an idle connection holds
// no writer and no write buffer).
type outbox struct {
	mu       sync.Mutex
	frames   []frame
	bytes    int
	overflow bool          // the budget was exceeded: the connection is being cut off
	closing  bool          // a close frame was queued: nothing more is accepted
	running  bool          // a writer goroutine is draining the queue
	drained  chan struct{} // closed when the writer takes the queue (nil: nobody waits)
}

// push queues f unless that would take the queue over maxBytes or
// maxFrames. accepted: f is queued; overflowNow: this push made the
// connection a slow consumer; start: the caller must start a writer.
func (o *outbox) push(f frame, maxBytes, maxFrames int) (accepted, overflowNow, start bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.overflow || o.closing {
		return false, false, false
	}
	n := f.size()
	if (maxBytes > 0 && o.bytes+n > maxBytes) || (maxFrames > 0 && len(o.frames) >= maxFrames) {
		o.overflow, o.frames, o.bytes = true, nil, 0
		return false, true, o.wakeWriter()
	}
	o.append(f)
	return true, false, o.wakeWriter()
}

func (o *outbox) append(f frame) {
	if f.opcode == websocket.CloseMessage {
		o.closing = true
	}
	o.frames = append(o.frames, f)
	o.bytes += f.size()
}

// wakeWriter reports whether a writer must be started (none runs).
func (o *outbox) wakeWriter() bool {
	if o.running {
		return false
	}
	o.running = true
	return true
}

// pushPaced queues f only if the queue has room for it within half the
// budget (the other half is kept for live events and replies), or is
// empty. Otherwise it returns a channel closed when the writer next takes
// the queue: wait on it and try again.
func (o *outbox) pushPaced(f frame, maxBytes, maxFrames int) (wait <-chan struct{}, start bool, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.overflow || o.closing {
		return nil, false, errOverBudget
	}
	roomy := (maxBytes <= 0 || o.bytes+f.size() <= maxBytes/2) && (maxFrames <= 0 || len(o.frames) < maxFrames/2)
	if roomy || len(o.frames) == 0 {
		o.append(f)
		return nil, o.wakeWriter(), nil
	}
	if o.drained == nil {
		o.drained = make(chan struct{})
	}
	return o.drained, false, nil
}

// take empties the queue, waking whoever waits for room. With nothing
// queued (and no overflow) the writer is done: stop tells it to exit.
func (o *outbox) take() (frames []frame, overflow, stop bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	frames, o.frames, o.bytes = o.frames, nil, 0
	if o.drained != nil {
		close(o.drained)
		o.drained = nil
	}
	if len(frames) == 0 && !o.overflow {
		o.running = false
		return nil, false, true
	}
	return frames, o.overflow, false
}

// Pending reports the bytes and frames queued for the client.
func (ws *WebSocket) Pending() (bytes, frames int) {
	ws.out.mu.Lock()
	defer ws.out.mu.Unlock()
	return ws.out.bytes, len(ws.out.frames)
}

// send queues one frame for the connection's writer. A client whose queue
// is over the relay's budget is a slow consumer: its queue is dropped, it
// is told why and disconnected.
func (ws *WebSocket) send(f frame) error {
	if ws.out == nil { // not yet running (only in tests that build a WebSocket by hand)
		return errNotRunning
	}
	ok, overflowNow, start := ws.out.push(f, ws.relay.MaxOutboundBytes, ws.relay.MaxOutboundFrames)
	if overflowNow {
		for _, cb := range ws.relay.OnSlowConsumer {
			cb(ws)
		}
		// unblock a write already stuck on the client's full window
		ws.conn.NetConn().SetWriteDeadline(time.Now().Add(slowConsumerGrace))
	}
	if start {
		go ws.writeLoop()
	}
	if !ok {
		return errOverBudget
	}
	return nil
}

// sendPaced queues a frame of a REQ's stored answer: it waits while the
// queue holds half the outbound budget or more, so that a client that
// reads gets an answer of any size, paced by its own reading, and a
// client that does not is cut off by the write timeout (the writer makes
// no progress), never by the size of the answer. It gives up when ctx or
// the connection ends.
func (ws *WebSocket) sendPaced(ctx context.Context, f frame) error {
	if ws.out == nil {
		return errNotRunning
	}
	for {
		wait, start, err := ws.out.pushPaced(f, ws.relay.MaxOutboundBytes, ws.relay.MaxOutboundFrames)
		if start {
			go ws.writeLoop()
		}
		if wait == nil {
			return err
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-ws.Context.Done():
			return errNotRunning
		}
	}
}

// slowConsumerGrace is how long a slow consumer gets to take its last
// NOTICE and close frame before the connection is closed.
const slowConsumerGrace = time.Second

// writeLoop drains the outbox and exits once it is empty; it owns every
// write to the socket while it runs (one runs at a time, outbox.running).
// A failed write or a slow consumer closes the connection.
func (ws *WebSocket) writeLoop() {
	for {
		frames, overflow, stop := ws.out.take()
		if stop {
			return
		}
		if ws.Context.Err() != nil {
			ws.abort()
			return
		}
		if overflow {
			ws.sayGoodbye()
			ws.abort()
			return
		}
		if err := ws.writeFrames(frames); err != nil {
			ws.abort()
			return
		}
	}
}

// abort ends the connection: its context (whoever waits on it, the
// reader waiting for a handler slot and paced senders included, gives up)
// and its socket.
func (ws *WebSocket) abort() {
	ws.cancel()
	ws.conn.Close()
}

// writeBuffers are the writers' batch buffers, shared by all connections:
// an idle connection holds none.
var writeBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 64*1024); return &b }}

const writeBatch = 256 * 1024

// writeFrames writes frames in as few syscalls as possible, each batch
// under the relay's write deadline.
func (ws *WebSocket) writeFrames(frames []frame) error {
	bp := writeBuffers.Get().(*[]byte)
	buf := (*bp)[:0]
	defer func() {
		if cap(buf) <= 4*writeBatch {
			*bp = buf[:0]
			writeBuffers.Put(bp)
		}
	}()
	for _, f := range frames {
		buf = appendFrame(buf, f)
		if len(buf) >= writeBatch {
			if err := ws.writeRaw(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	if len(buf) > 0 {
		return ws.writeRaw(buf)
	}
	return nil
}

func (ws *WebSocket) writeRaw(b []byte) error {
	nc := ws.conn.NetConn()
	nc.SetWriteDeadline(time.Now().Add(ws.relay.WriteWait))
	_, err := nc.Write(b)
	return err
}

// sayGoodbye tells a slow consumer why it is cut off, as far as its window
// allows within slowConsumerGrace.
func (ws *WebSocket) sayGoodbye() {
	reason := "slow consumer: more than " + strconv.Itoa(ws.relay.MaxOutboundBytes) + " bytes or " +
		strconv.Itoa(ws.relay.MaxOutboundFrames) + " messages waiting to be read"
	notice, _ := nostr.NoticeEnvelope("rate-limited: " + reason).MarshalJSON()
	buf := appendFrame(nil, frame{opcode: websocket.TextMessage, parts: [3][]byte{notice}})
	buf = appendFrame(buf, frame{opcode: websocket.CloseMessage,
		parts: [3][]byte{websocket.FormatCloseMessage(websocket.ClosePolicyViolation, "slow consumer")}})
	nc := ws.conn.NetConn()
	nc.SetWriteDeadline(time.Now().Add(slowConsumerGrace))
	nc.Write(buf)
}

// appendFrame appends f as one unmasked (server) websocket frame, RFC 6455 §5.2.
func appendFrame(buf []byte, f frame) []byte {
	n := f.size()
	buf = append(buf, 0x80|f.opcode)
	switch {
	case n <= 125:
		buf = append(buf, byte(n))
	case n <= 0xffff:
		buf = append(buf, 126)
		buf = binary.BigEndian.AppendUint16(buf, uint16(n))
	default:
		buf = append(buf, 127)
		buf = binary.BigEndian.AppendUint64(buf, uint64(n))
	}
	for _, p := range f.parts {
		buf = append(buf, p...)
	}
	return buf
}

// encodeMessage encodes a protocol message; go-nostr's envelopes encode
// themselves without the re-validation json.Marshal adds.
func encodeMessage(v any) ([]byte, error) {
	if m, ok := v.(json.Marshaler); ok {
		return m.MarshalJSON()
	}
	return json.Marshal(v)
}

// eventFramePrefix is `["EVENT","<id>",` with the subscription id escaped
// (go-nostr writes it raw, so an id holding a quote would break the frame).
func eventFramePrefix(id string) []byte {
	b := make([]byte, 0, len(id)+16)
	b = append(b, `["EVENT",`...)
	if isPlainASCII(id) { // nothing to escape
		b = append(append(append(b, '"'), id...), '"')
	} else {
		q, _ := json.Marshal(id)
		b = append(b, q...)
	}
	return append(b, ',')
}

func isPlainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

var closingBracket = []byte("]")

// WriteEvent queues event for subscription id, encoding the event itself
// only if body is nil (pass a body to share one encoding between frames).
func (ws *WebSocket) WriteEvent(id string, event *nostr.Event, body []byte) error {
	return ws.writeEventFrame(eventFramePrefix(id), event, body)
}

// eventFrame is the EVENT frame of event (encoded only if body is nil).
func eventFrame(prefix []byte, event *nostr.Event, body []byte) (frame, error) {
	if body == nil {
		var err error
		if body, err = event.MarshalJSON(); err != nil {
			return frame{}, err
		}
	}
	return frame{opcode: websocket.TextMessage, parts: [3][]byte{prefix, body, closingBracket}}, nil
}

// writeEventFrame is WriteEvent with the frame prefix already built.
func (ws *WebSocket) writeEventFrame(prefix []byte, event *nostr.Event, body []byte) error {
	f, err := eventFrame(prefix, event, body)
	if err != nil {
		return err
	}
	return ws.send(f)
}

// writeStoredEvent queues a stored event of a REQ's answer, paced
// (sendPaced).
func (ws *WebSocket) writeStoredEvent(ctx context.Context, prefix []byte, event *nostr.Event, body []byte) error {
	f, err := eventFrame(prefix, event, body)
	if err != nil {
		return err
	}
	return ws.sendPaced(ctx, f)
}
