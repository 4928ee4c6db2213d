package relayclient

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"time"

	"github.com/coder/websocket"

	"github.com/agentnode/agentnode/internal/netguard"
)

// wsConn is one websocket to a relay: go-nostr's Connection (same read
// limit, compression and user agent), dialled here because go-nostr's
// cannot take a dialer and a guarded dial needs one.
type wsConn struct{ c *websocket.Conn }

// wsReadLimit is the largest message read (go-nostr's: 32 MiB).
const wsReadLimit = 2 << 24

// dialWS opens the websocket; with a guard, every address the handshake
// connects to (after each name resolution and redirect) must pass it.
func dialWS(ctx context.Context, url string, header http.Header, guard *netguard.Policy) (*wsConn, error) {
	if header == nil {
		header = http.Header{}
	}
	if header.Get("User-Agent") == "" {
		header = header.Clone()
		header.Set(textproto.CanonicalMIMEHeaderKey("User-Agent"), "github.com/nbd-wtf/go-nostr")
	}
	opts := &websocket.DialOptions{HTTPHeader: header, CompressionMode: websocket.CompressionContextTakeover}
	if guard != nil {
		tr := &http.Transport{Proxy: nil, DialContext: guard.DialContext, TLSHandshakeTimeout: 10 * time.Second}
		defer tr.CloseIdleConnections()
		opts.HTTPClient = &http.Client{Transport: tr}
	}
	c, _, err := websocket.Dial(ctx, url, opts)
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(wsReadLimit)
	return &wsConn{c: c}, nil
}

// WriteMessage writes one text message.
func (w *wsConn) WriteMessage(ctx context.Context, data []byte) error {
	if err := w.c.Write(ctx, websocket.MessageText, data); err != nil {
		return fmt.Errorf("failed to write message: %w", err)
	}
	return nil
}

// ReadMessage reads the next message into buf.
func (w *wsConn) ReadMessage(ctx context.Context, buf *bytes.Buffer) error {
	_, r, err := w.c.Reader(ctx)
	if err != nil {
		return fmt.Errorf("failed to get reader: %w", err)
	}
	if _, err := io.Copy(buf, r); err != nil {
		return fmt.Errorf("failed to read message: %w", err)
	}
	return nil
}

// Ping pings the relay and waits (at most 10 s) for its pong.
func (w *wsConn) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeoutCause(ctx, 10*time.Second, errPingSlow)
	defer cancel()
	return w.c.Ping(ctx)
}

// Close closes the websocket normally.
func (w *wsConn) Close() error { return w.c.Close(websocket.StatusNormalClosure, "") }
