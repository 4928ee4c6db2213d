package contextvm

import (
	"errors"
	"fmt"

	"github.com/agentnode/agentnode/events"
)

// ErrBadServerURI: a server address that is not nostr:<npub>,
// nostr:<nprofile> or a hex pubkey.
var ErrBadServerURI = errors.New("contextvm: not a server address (nostr:npub1…, nostr:nprofile1… or hex pubkey)")

// ParseServerURI reads a ContextVM server's address, as an mcp_service
// binding's service_uri names it: "nostr:" (optional) and an npub, an
// nprofile (whose relay hints are returned) or a hex pubkey. The URI comes
// from a published package: malformed NIP-19 data is an error, never a panic
// (events.ParsePubKeyHints guards go-nostr's decoder).
func ParseServerURI(uri string) (pubkey string, relays []string, err error) {
	pubkey, relays, err = events.ParsePubKeyHints(uri)
	if err != nil {
		return "", nil, fmt.Errorf("%w: %v", ErrBadServerURI, err)
	}
	return pubkey, relays, nil
}
