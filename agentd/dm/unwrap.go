package dm

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip44"
)

// errNotNIP44: a layer's content is not shaped as a NIP-44 v2 payload.
var errNotNIP44 = errors.New("not a NIP-44 v2 payload")

// Message is one unwrapped NIP-17 rumor.
type Message struct {
	Rumor nostr.Event // id recomputed, unsigned
	Seal  nostr.Event // the sender's signed kind 13
}

// Unwrap opens a gift wrap addressed to the holder of sk: wrap (1059) ->
// seal (13, signature checked) -> rumor. Unlike nip59.GiftUnwrap, which
// overwrites the rumor's author with the seal's, a rumor whose pubkey is
// not the seal's signer is refused with ErrImpersonation.
func Unwrap(wrap *nostr.Event, sk string) (*Message, error) {
	if wrap.Kind != nostr.KindGiftWrap {
		return nil, &UnwrapError{wrap.ID, ErrNotGiftWrap}
	}
	var seal nostr.Event
	if err := decryptJSON(wrap.PubKey, sk, wrap.Content, &seal); err != nil {
		return nil, &UnwrapError{wrap.ID, fmt.Errorf("%w: %w", ErrBadSeal, err)}
	}
	if ok, _ := seal.CheckSignature(); seal.Kind != nostr.KindSeal || !ok {
		return nil, &UnwrapError{wrap.ID, fmt.Errorf("%w: kind %d, signature valid %v", ErrBadSeal, seal.Kind, ok)}
	}
	var rumor nostr.Event
	if err := decryptJSON(seal.PubKey, sk, seal.Content, &rumor); err != nil {
		return nil, &UnwrapError{wrap.ID, fmt.Errorf("%w: %w", ErrBadRumor, err)}
	}
	if rumor.PubKey != seal.PubKey {
		return nil, &UnwrapError{wrap.ID, fmt.Errorf("%w: rumor by %s, seal by %s", ErrImpersonation, rumor.PubKey, seal.PubKey)}
	}
	rumor.ID, rumor.Sig = rumor.GetID(), ""
	return &Message{Rumor: rumor, Seal: seal}, nil
}

// NIP-44 v2 payloads in base64: version, 32-byte nonce, at least 34
// bytes of ciphertext, 32-byte MAC; at most 65,603 bytes.
const (
	minPayload = 132
	maxPayload = 87_472
)

// nip44Shaped is a cheap test that ciphertext can be a NIP-44 v2 payload:
// junk fails it without the key agreement, the costly step of decrypting.
func nip44Shaped(ciphertext string) bool {
	if n := len(ciphertext); n < minPayload || n > maxPayload {
		return false
	}
	head, err := base64.StdEncoding.DecodeString(ciphertext[:4])
	return err == nil && head[0] == 2
}

// decryptJSON NIP-44-decrypts ciphertext between sk and pub into v.
func decryptJSON(pub, sk, ciphertext string, v any) error {
	if !nip44Shaped(ciphertext) {
		return errNotNIP44
	}
	key, err := nip44.GenerateConversationKey(pub, sk)
	if err != nil {
		return err
	}
	plain, err := nip44.Decrypt(ciphertext, key)
	if err != nil {
		return err
	}
	return json.Unmarshal([]byte(plain), v)
}
