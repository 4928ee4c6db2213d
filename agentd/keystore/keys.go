package keystore

import (
	"context"

	"github.com/nbd-wtf/go-nostr"
)

// Keys is where a daemon keeps its agents' secret keys: a directory of
// files (Store, the embedded default) or a database shared by instances
// (agentd/agentpg.Keys, `serve --postgres`). Implementations are safe for
// concurrent use and store keys as Encode renders them (NIP-49 encrypted
// with a passphrase). Errors for these cases wrap the package's sentinels:
// an unknown or malformed pubkey ErrNotFound or ErrBadPubKey; an
// undecryptable key ErrPassphraseRequired or ErrWrongPassphrase. Every
// method that may read or write the backing takes the caller's ctx: a
// cancelled request cancels its queries (a backing that cannot be
// interrupted checks ctx before it starts and returns ctx.Err()).
type Keys interface {
	// Create generates a keypair, stores the secret and returns the pubkey.
	Create(ctx context.Context) (string, error)
	// Secret returns pubkey's secret key (hex), checked to be pubkey's.
	Secret(ctx context.Context, pubkey string) (string, error)
	// Sign sets evt.PubKey, ID and Sig with pubkey's key.
	Sign(ctx context.Context, pubkey string, evt *nostr.Event) error
	// Encrypted reports whether pubkey's stored key is an ncryptsec.
	Encrypted(ctx context.Context, pubkey string) (bool, error)
	// Delete removes pubkey's key (ErrNotFound when there is none).
	Delete(ctx context.Context, pubkey string) error
	// List returns the pubkeys that have a key, sorted.
	List(ctx context.Context) ([]string, error)
	// Encrypts reports whether new keys are stored encrypted.
	Encrypts() bool
}

var _ Keys = (*Store)(nil)
