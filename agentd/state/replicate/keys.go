package replicate

import (
	"fmt"
	"sync"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip44"

	"github.com/agentnode/agentnode/events"
)

// keyring is the replicator's key and its NIP-44 conversation keys, which
// are symmetric (ECDH): the key with a peer both encrypts to it and
// decrypts from it.
type keyring struct {
	sk, pk string

	mu    sync.Mutex
	convs map[string][32]byte
}

// maxConversations bounds the cache; beyond it the cache starts over.
const maxConversations = 4096

func newKeyring(secret string) (*keyring, error) {
	sk, err := events.ParseSecretKey(secret)
	if err != nil {
		return nil, fmt.Errorf("%w: secret key: %w", ErrConfig, err)
	}
	pk, err := nostr.GetPublicKey(sk)
	if err != nil {
		return nil, fmt.Errorf("%w: secret key", ErrConfig)
	}
	return &keyring{sk: sk, pk: pk, convs: map[string][32]byte{}}, nil
}

// conversation returns the NIP-44 v2 conversation key with peer.
func (k *keyring) conversation(peer string) ([32]byte, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if ck, ok := k.convs[peer]; ok {
		return ck, nil
	}
	ck, err := nip44.GenerateConversationKey(peer, k.sk)
	if err != nil {
		return ck, fmt.Errorf("%w: no conversation key with %.16s: %w", ErrBadEvent, peer, err)
	}
	if len(k.convs) >= maxConversations {
		k.convs = map[string][32]byte{}
	}
	k.convs[peer] = ck
	return ck, nil
}
