package hostile

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
)

// rawConn is a websocket the test drives frame by frame, as an attacker
// would: it can send without reading and read without answering.
type rawConn struct {
	*websocket.Conn
}

// dialRaw opens a websocket to n; a positive rcvbuf shrinks the socket's
// receive buffer so that a client that does not read fills it quickly.
func dialRaw(t *testing.T, n *node, rcvbuf int) rawConn {
	t.Helper()
	d := websocket.Dialer{
		HandshakeTimeout: 10 * time.Second,
		NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			nd := &net.Dialer{}
			if rcvbuf > 0 { // before connect, so that the window is negotiated small
				nd.Control = func(_, _ string, rc syscall.RawConn) error {
					return rc.Control(func(fd uintptr) {
						syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvbuf)
					})
				}
			}
			return nd.DialContext(ctx, network, addr)
		},
	}
	c, _, err := d.Dial(n.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return rawConn{c}
}

// send writes one JSON message (an array) within a second.
func (c rawConn) send(t *testing.T, msg ...any) {
	t.Helper()
	b, _ := json.Marshal(msg)
	c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if err := c.WriteMessage(websocket.TextMessage, b); err != nil {
		t.Fatalf("send %s: %v", b, err)
	}
}

// next reads messages until one whose label (and, when given, second
// element) matches; it fails the test after wait.
func (c rawConn) next(t *testing.T, wait time.Duration, label, id string) []json.RawMessage {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(wait))
	for {
		_, b, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("waiting for %s %q: %v", label, id, err)
		}
		var msg []json.RawMessage
		if json.Unmarshal(b, &msg) != nil || len(msg) == 0 {
			continue
		}
		var l, second string
		json.Unmarshal(msg[0], &l)
		if len(msg) > 1 {
			json.Unmarshal(msg[1], &second)
		}
		if l == label && (id == "" || second == id) {
			return msg
		}
	}
}

// str decodes a JSON string element.
func str(raw json.RawMessage) string {
	var s string
	json.Unmarshal(raw, &s)
	return s
}

// closedWith asserts that msg is ["CLOSED", id, reason] with a reason
// starting with prefix.
func closedWith(t *testing.T, msg []json.RawMessage, prefix string) string {
	t.Helper()
	if len(msg) < 3 || !strings.HasPrefix(str(msg[2]), prefix) {
		t.Fatalf("got %s, want a CLOSED with reason %q…", msg, prefix)
	}
	return str(msg[2])
}

// jsonStrings decodes a message whose first elements are strings, leaving
// the rest empty.
func jsonStrings(b []byte, out *[]string) {
	var raw []json.RawMessage
	if json.Unmarshal(b, &raw) != nil {
		return
	}
	for _, r := range raw {
		*out = append(*out, str(r))
	}
}
