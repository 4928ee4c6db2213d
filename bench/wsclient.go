package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/nbd-wtf/go-nostr"
)

// wsTimeout bounds every wait for a relay's answer.
const wsTimeout = 60 * time.Second

// errClosed is a REQ the relay answered with CLOSED.
var errClosed = errors.New("subscription closed by relay")

// wsConn is a bare NIP-01 websocket client: it writes REQ and CLOSE and
// reads frames without parsing events, so that the time it measures is the
// relay's, not a client library's. It starts no goroutine; it is not safe
// for concurrent use.
type wsConn struct{ c *websocket.Conn }

// dial connects to a relay's websocket URL.
func dial(ctx context.Context, url string) (*wsConn, error) {
	c, _, err := websocket.DefaultDialer.DialContext(ctx, url, nil)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", url, err)
	}
	return &wsConn{c}, nil
}

// req sends ["REQ", id, filter].
func (w *wsConn) req(id string, filter nostr.Filter) error {
	msg, err := nostr.ReqEnvelope{SubscriptionID: id, Filters: nostr.Filters{filter}}.MarshalJSON()
	if err != nil {
		return err
	}
	return w.c.WriteMessage(websocket.TextMessage, msg)
}

// closeSub sends ["CLOSE", id].
func (w *wsConn) closeSub(id string) error {
	msg, err := nostr.CloseEnvelope(id).MarshalJSON()
	if err != nil {
		return err
	}
	return w.c.WriteMessage(websocket.TextMessage, msg)
}

// Prefixes of the relay messages the client tells apart.
var (
	prefixEOSE   = []byte(`["EOSE",`)
	prefixEvent  = []byte(`["EVENT",`)
	prefixClosed = []byte(`["CLOSED",`)
)

// readUntilEOSE reads frames until the EOSE of subscription id and
// returns the EVENT frames met on the way, unparsed.
func (w *wsConn) readUntilEOSE(id string) (events [][]byte, err error) {
	w.c.SetReadDeadline(time.Now().Add(wsTimeout))
	for {
		_, msg, err := w.c.ReadMessage()
		if err != nil {
			return events, fmt.Errorf("read: %w", err)
		}
		switch {
		case bytes.HasPrefix(msg, prefixEvent):
			events = append(events, msg)
		case bytes.HasPrefix(msg, prefixEOSE) && labelled(msg, id):
			return events, nil
		case bytes.HasPrefix(msg, prefixClosed) && labelled(msg, id):
			return events, fmt.Errorf("%w: %s", errClosed, msg)
		}
	}
}

// labelled reports whether the relay message msg is about subscription id.
func labelled(msg []byte, id string) bool {
	var parts []json.RawMessage
	if json.Unmarshal(msg, &parts) != nil || len(parts) < 2 {
		return false
	}
	var got string
	return json.Unmarshal(parts[1], &got) == nil && got == id
}

// countEOSE reads frames until n EOSE messages have arrived.
func (w *wsConn) countEOSE(n int) error {
	w.c.SetReadDeadline(time.Now().Add(wsTimeout))
	for n > 0 {
		_, msg, err := w.c.ReadMessage()
		if err != nil {
			return fmt.Errorf("read: %w", err)
		}
		switch {
		case bytes.HasPrefix(msg, prefixEOSE):
			n--
		case bytes.HasPrefix(msg, prefixClosed):
			return fmt.Errorf("%w: %s", errClosed, msg)
		}
	}
	return nil
}

// close says goodbye and closes the connection.
func (w *wsConn) close() error {
	bye := websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")
	w.c.WriteControl(websocket.CloseMessage, bye, time.Now().Add(time.Second))
	return w.c.Close()
}

// eventIDs parses EVENT frames and returns their event ids.
func eventIDs(frames [][]byte) ([]string, error) {
	ids := make([]string, 0, len(frames))
	for _, f := range frames {
		env, ok := parseMessage(f).(*nostr.EventEnvelope)
		if !ok {
			return ids, fmt.Errorf("bad EVENT frame: %.80s", f)
		}
		ids = append(ids, env.Event.ID)
	}
	return ids, nil
}

// parser reads relay frames (go-nostr's, stateless).
var parser = nostr.NewMessageParser()

// parseMessage is frame's envelope, nil when it does not parse.
func parseMessage(frame []byte) nostr.Envelope {
	env, err := parser.ParseMessage(string(frame))
	if err != nil {
		return nil
	}
	return env
}
