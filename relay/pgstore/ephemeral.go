package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/nbd-wtf/go-nostr"
)

// EphemeralChannel carries ephemeral events (never stored) between
// instances: the payload is "<origin>:<event JSON>", origin naming the
// Store that sent it, so that a Listener skips its own Store's.
const EphemeralChannel = "pgstore_ephemeral"

// maxNotifyPayload is PostgreSQL's NOTIFY payload limit (8000 bytes), less
// a margin.
const maxNotifyPayload = 7900

// newOrigin is a random name for one Store.
func newOrigin() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// NotifyEphemeral hands evt to the Listeners of the other Stores on the
// database (best effort, like an ephemeral event itself: a Listener that is
// reconnecting misses it). ErrTooLarge when its JSON does not fit a NOTIFY.
func (s *Store) NotifyEphemeral(ctx context.Context, evt *nostr.Event) error {
	b, err := json.Marshal(evt)
	if err != nil {
		return err
	}
	payload := s.origin + ":" + string(b)
	if len(payload) > maxNotifyPayload {
		return ErrTooLarge
	}
	if _, err := s.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, EphemeralChannel, payload); err != nil {
		return fmt.Errorf("pgstore: notify ephemeral: %w", err)
	}
	return nil
}

// ephemeralHandler delivers the other Stores' ephemeral events.
type ephemeralHandler struct{ l *Listener }

// HandleBacklog only marks the channel as listened on: ephemeral events
// are not caught up.
func (h ephemeralHandler) HandleBacklog(context.Context, string, *pgx.Conn) error {
	h.l.listenedOne()
	return nil
}

func (h ephemeralHandler) HandleNotification(_ context.Context, n *pgconn.Notification, _ *pgx.Conn) error {
	origin, body, ok := strings.Cut(n.Payload, ":")
	if !ok || origin == h.l.store.origin {
		return nil
	}
	var evt nostr.Event
	if err := json.Unmarshal([]byte(body), &evt); err != nil {
		return nil // not ours to fail the connection over
	}
	h.l.Ephemeral(&evt)
	return nil
}
