package main

import (
	"context"

	"github.com/nbd-wtf/go-nostr"
)

// refusePublicKey fails when the --key the user gave in hex is somebody's
// public key: the relays hold events it authored. Any 64-hex value is a
// valid secret key, so a pasted public key would otherwise sign, as a
// stranger nobody knows. A key never seen publishing cannot be told apart;
// the publish report names the npub that signed, for those.
func refusePublicKey(ctx context.Context, cmd string, k *keyFlag, s *session, sk string) error {
	if !k.hex {
		return nil // an nsec is a secret key by its prefix
	}
	evts, err := s.QuerySync(ctx, nostr.Filter{Authors: []string{sk}, Limit: 1})
	if err != nil || len(evts) == 0 {
		return nil
	}
	return usagef("%s: --%s is a public key (%s has published on these relays), not a secret key: pass your nsec1... (or its hex)",
		cmd, k.flag, npub(sk))
}
