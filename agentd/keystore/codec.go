package keystore

import (
	"fmt"
	"strings"

	"github.com/nbd-wtf/go-nostr/nip49"

	"github.com/agentnode/agentnode/events"
)

// Encode renders secret key sk (hex) as any Keys backend stores it: hex,
// or a NIP-49 ncryptsec when o has a passphrase (cost o.LogN, 0: DefaultLogN).
func Encode(sk string, o Options) (string, error) {
	if o.Passphrase == "" {
		return sk, nil
	}
	if o.LogN == 0 {
		o.LogN = DefaultLogN
	}
	enc, err := nip49.Encrypt(sk, o.Passphrase, o.LogN, nip49.ClientDoesNotTrackThisData)
	if err != nil {
		return "", fmt.Errorf("keystore: encrypt: %w", err)
	}
	return enc, nil
}

// Decode turns a stored key (hex or ncryptsec) back into a hex secret key:
// ErrPassphraseRequired, ErrWrongPassphrase or ErrBadKeyFile when it cannot.
func Decode(raw string, o Options) (string, error) {
	if !strings.HasPrefix(raw, "ncryptsec1") {
		sk, err := events.ParseSecretKey(raw)
		if err != nil || !events.IsHex64(raw) {
			return "", ErrBadKeyFile
		}
		return sk, nil
	}
	if o.Passphrase == "" {
		return "", ErrPassphraseRequired
	}
	sk, err := nip49.Decrypt(raw, o.Passphrase)
	if err != nil {
		return "", ErrWrongPassphrase
	}
	if _, err := events.ParseSecretKey(sk); err != nil {
		return "", ErrBadKeyFile
	}
	return sk, nil
}

// IsEncrypted reports whether a stored key is a NIP-49 ncryptsec.
func IsEncrypted(raw string) bool { return strings.HasPrefix(raw, "ncryptsec1") }
