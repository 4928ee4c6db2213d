package replicate

import (
	"log/slog"

	"github.com/agentnode/agentnode/internal/relayclient"
)

// WSRelay is a relay reached over a websocket (internal/relayclient): it
// connects on first use and again after a drop, and answers NIP-42
// challenges with the agent's key.
type WSRelay = relayclient.Relay

// ErrSubscriptionEnded is returned by WSRelay.Subscribe when the relay
// closes the subscription or the connection drops.
var ErrSubscriptionEnded = relayclient.ErrSubscriptionEnded

var (
	_ Publisher  = (*WSRelay)(nil)
	_ Subscriber = (*WSRelay)(nil)
)

// NewWSRelay returns a WSRelay for url that authenticates with secretKey
// (hex, the replicator's key). It does not connect yet.
func NewWSRelay(url, secretKey string, log *slog.Logger) *WSRelay {
	return relayclient.New(url, secretKey, log)
}

// WSLink is the Link of w, named after its URL.
func WSLink(w *WSRelay) Link { return Link{Name: w.URL(), Publisher: w, Subscriber: w} }
