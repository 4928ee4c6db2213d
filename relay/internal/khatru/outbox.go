package khatru

// PATCH (agentnode): a bounded outbound queue per connection, drained by the
// connection's own writer goroutine with a write deadline. Upstream khatru
// writes every message synchronously under a mutex with no deadline, so one
// client that stops reading blocks whoever writes to it, the live broadcast
// (and with it the ingest path) included. See PATCHES.md.

import (
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

// outbox is a connection's bounded queue of frames.
type outbox struct {
	mu       sync.Mutex
	frames   []frame
	bytes    int
	overflow bool // the budget was exceeded: the connection is being cut off
	closing  bool // a close frame was queued: nothing more is accepted
	wake     chan struct{}
}

func newOutbox() *outbox { return &outbox{wake: make(chan struct{}, 1)} }

// push queues f unless that would take the queue over maxBytes or
// maxFrames; it reports false when the connection is (now) over budget.
func (o *outbox) push(f frame, maxBytes, maxFrames int) (accepted, overflowNow bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.overflow || o.closing {
		return false, false
	}
	n := f.size()
	if (maxBytes > 0 && o.bytes+n > maxBytes) || (maxFrames > 0 && len(o.frames) >= maxFrames) {
		o.overflow, o.frames, o.bytes = true, nil, 0
		o.signal()
		return false, true
	}
	if f.opcode == websocket.CloseMessage {
		o.closing = true
	}
	o.frames = append(o.frames, f)
	o.bytes += n
	o.signal()
	return true, false
}

func (o *outbox) signal() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// take empties the queue.
func (o *outbox) take() (frames []frame, overflow bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	frames, o.frames, o.bytes = o.frames, nil, 0
	return frames, o.overflow
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
	ok, overflowNow := ws.out.push(f, ws.relay.MaxOutboundBytes, ws.relay.MaxOutboundFrames)
	if overflowNow {
		for _, cb := range ws.relay.OnSlowConsumer {
			cb(ws)
		}
		// unblock a write already stuck on the client's full window
		ws.conn.NetConn().SetWriteDeadline(time.Now().Add(slowConsumerGrace))
	}
	if !ok {
		return errOverBudget
	}
	return nil
}

// slowConsumerGrace is how long a slow consumer gets to take its last
// NOTICE and close frame before the connection is closed.
const slowConsumerGrace = time.Second

// writeLoop drains the outbox until the connection ends; it owns every
// write to the socket.
func (ws *WebSocket) writeLoop() {
	defer ws.conn.Close()
	buf := make([]byte, 0, 64*1024)
	for {
		select {
		case <-ws.Context.Done():
			return
		case <-ws.out.wake:
		}
		frames, overflow := ws.out.take()
		if overflow {
			ws.sayGoodbye(buf[:0])
			return
		}
		var err error
		if buf, err = ws.writeFrames(buf[:0], frames); err != nil {
			return
		}
	}
}

// writeFrames writes frames in as few syscalls as possible, each batch
// under the relay's write deadline.
func (ws *WebSocket) writeFrames(buf []byte, frames []frame) ([]byte, error) {
	const batch = 256 * 1024
	for _, f := range frames {
		buf = appendFrame(buf, f)
		if len(buf) >= batch {
			if err := ws.writeRaw(buf); err != nil {
				return buf, err
			}
			buf = buf[:0]
		}
	}
	if len(buf) > 0 {
		return buf, ws.writeRaw(buf)
	}
	return buf, nil
}

func (ws *WebSocket) writeRaw(b []byte) error {
	nc := ws.conn.NetConn()
	nc.SetWriteDeadline(time.Now().Add(ws.relay.WriteWait))
	_, err := nc.Write(b)
	return err
}

// sayGoodbye tells a slow consumer why it is cut off, as far as its window
// allows within slowConsumerGrace.
func (ws *WebSocket) sayGoodbye(buf []byte) {
	reason := "slow consumer: more than " + strconv.Itoa(ws.relay.MaxOutboundBytes) + " bytes or " +
		strconv.Itoa(ws.relay.MaxOutboundFrames) + " messages waiting to be read"
	notice, _ := nostr.NoticeEnvelope("rate-limited: " + reason).MarshalJSON()
	buf = appendFrame(buf, frame{opcode: websocket.TextMessage, parts: [3][]byte{notice}})
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

// writeEventFrame is WriteEvent with the frame prefix already built.
func (ws *WebSocket) writeEventFrame(prefix []byte, event *nostr.Event, body []byte) error {
	if body == nil {
		var err error
		if body, err = event.MarshalJSON(); err != nil {
			return err
		}
	}
	return ws.send(frame{opcode: websocket.TextMessage, parts: [3][]byte{prefix, body, closingBracket}})
}
