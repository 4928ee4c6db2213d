package contextvm

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
)

// ErrBadServerURI: a server address that is not nostr:<npub>,
// nostr:<nprofile> or a hex pubkey.
var ErrBadServerURI = errors.New("contextvm: not a server address (nostr:npub1…, nostr:nprofile1… or hex pubkey)")

// ParseServerURI reads a ContextVM server's address, as an mcp_service
// binding's service_uri names it: "nostr:" (optional) and an npub, an
// nprofile (whose relay hints are returned) or a hex pubkey.
func ParseServerURI(uri string) (pubkey string, relays []string, err error) {
	s := strings.TrimPrefix(strings.TrimSpace(uri), "nostr:")
	if nostr.IsValidPublicKey(s) {
		return s, nil, nil
	}
	prefix, data, err := nip19.Decode(s)
	if err != nil {
		return "", nil, fmt.Errorf("%w: %v", ErrBadServerURI, err)
	}
	switch v := data.(type) {
	case string:
		if prefix == "npub" {
			return v, nil, nil
		}
	case nostr.ProfilePointer:
		return v.PublicKey, v.Relays, nil
	}
	return "", nil, fmt.Errorf("%w: a %s", ErrBadServerURI, prefix)
}
