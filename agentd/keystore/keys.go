package keystore

import "github.com/nbd-wtf/go-nostr"

// Keys is where a daemon keeps its agents' secret keys: a directory of
// files (Store, the embedded default) or a database shared by instances
// (agentd/agentpg.Keys, `serve --postgres`). Implementations are safe for
// concurrent use and store keys as Encode renders them (NIP-49 encrypted
// with a passphrase). Errors for these cases wrap the package's sentinels:
// an unknown or malformed pubkey ErrNotFound or ErrBadPubKey; an
// undecryptable key ErrPassphraseRequired or ErrWrongPassphrase.
type Keys interface {
	// Create generates a keypair, stores the secret and returns the pubkey.
	Create() (string, error)
	// Secret returns pubkey's secret key (hex), checked to be pubkey's.
	Secret(pubkey string) (string, error)
	// Sign sets evt.PubKey, ID and Sig with pubkey's key.
	Sign(pubkey string, evt *nostr.Event) error
	// Encrypted reports whether pubkey's stored key is an ncryptsec.
	Encrypted(pubkey string) (bool, error)
	// Delete removes pubkey's key (ErrNotFound when there is none).
	Delete(pubkey string) error
	// List returns the pubkeys that have a key, sorted.
	List() ([]string, error)
	// Encrypts reports whether new keys are stored encrypted.
	Encrypts() bool
}

var _ Keys = (*Store)(nil)
