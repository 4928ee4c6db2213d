package khatru

import (
	"context"
	"errors"
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/puzpuzpuz/xsync/v3"
)

// PATCH (agentnode): writes are queued (outbox.go), never made under a lock
// on the socket; errors of the queue.
var (
	errOverBudget = errors.New("khatru: outbound budget exceeded (slow consumer)")
	errNotRunning = errors.New("khatru: connection not running")
)

type WebSocket struct {
	conn *websocket.Conn

	// PATCH (agentnode): the relay this connection belongs to, its
	// outbound queue, and the semaphores bounding its concurrent work.
	relay    *Relay
	out      *outbox
	inflight chan struct{} // messages being handled
	queries  chan struct{} // REQ/COUNT queries being answered

	// original request
	Request *http.Request

	// this Context will be canceled whenever the connection is closed from the client side or server-side.
	Context context.Context
	cancel  context.CancelFunc

	// nip42
	Challenge       string
	AuthedPublicKey string
	Authed          chan struct{}

	// nip77; PATCH (agentnode): made on first use (negSessions), an
	// xsync map costs kilobytes that most connections never use
	negentropySessions *xsync.MapOf[string, *NegentropySession]
	negOnce            sync.Once

	authLock  sync.Mutex
	closeOnce sync.Once
}

// WriteJSON queues one protocol message.
func (ws *WebSocket) WriteJSON(v any) error {
	b, err := encodeMessage(v)
	if err != nil {
		return err
	}
	return ws.send(frame{opcode: websocket.TextMessage, parts: [3][]byte{b}})
}

// WriteMessage queues one message of type t (text, ping, pong or close).
func (ws *WebSocket) WriteMessage(t int, b []byte) error {
	return ws.send(frame{opcode: byte(t), parts: [3][]byte{b}})
}

// Close says goodbye with a close frame and closes the connection after
// grace, whether or not the client answered. PATCH (agentnode).
func (ws *WebSocket) Close(code int, reason string, grace time.Duration) {
	ws.closeOnce.Do(func() {
		ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason))
		go func() {
			t := time.NewTimer(grace)
			defer t.Stop()
			select {
			case <-ws.Context.Done():
			case <-t.C:
			}
			ws.abort()
		}()
	})
}

// negSessions is the connection's NIP-77 sessions, made on first use.
// PATCH (agentnode).
func (ws *WebSocket) negSessions() *xsync.MapOf[string, *NegentropySession] {
	ws.negOnce.Do(func() { ws.negentropySessions = xsync.NewMapOf[string, *NegentropySession]() })
	return ws.negentropySessions
}

// startPinger queues a ping every period until the returned timer is
// stopped or the queue refuses it (the connection is ending). A timer,
// not a goroutine: an idle connection holds only its reader. PATCH
// (agentnode).
func (ws *WebSocket) startPinger(period time.Duration) *time.Timer {
	var t atomic.Pointer[time.Timer]
	t.Store(time.AfterFunc(time.Duration(math.MaxInt64), func() {
		if ws.WriteMessage(websocket.PingMessage, nil) == nil && ws.Context.Err() == nil {
			t.Load().Reset(period)
		}
	}))
	t.Load().Reset(period)
	return t.Load()
}
