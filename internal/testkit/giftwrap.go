package testkit

import (
	"encoding/json"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip44"
)

// Encrypt NIP-44-encrypts v's JSON from the secret key sk to the public
// key pub.
func Encrypt(t testing.TB, sk, pub string, v any) string {
	t.Helper()
	key, err := nip44.GenerateConversationKey(pub, sk)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := nip44.Encrypt(string(b), key)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Seal is a NIP-59 seal (kind 13) of rumor to recipient, signed by sk and
// dated at, whatever rumor says its author is.
func Seal(t testing.TB, rumor nostr.Event, sk, recipient string, at nostr.Timestamp) nostr.Event {
	t.Helper()
	seal := nostr.Event{Kind: 13, CreatedAt: at, Tags: nostr.Tags{}, Content: Encrypt(t, sk, recipient, rumor)}
	if err := seal.Sign(sk); err != nil {
		t.Fatal(err)
	}
	return seal
}

// GiftWrap is a NIP-59 gift wrap (kind 1059) of v (a seal, or anything
// to be sent as one) to recipient, signed by a one-time key and dated at.
func GiftWrap(t testing.TB, v any, recipient string, at nostr.Timestamp) *nostr.Event {
	t.Helper()
	otk := nostr.GeneratePrivateKey()
	wrap := &nostr.Event{Kind: 1059, CreatedAt: at, Tags: nostr.Tags{{"p", recipient}}, Content: Encrypt(t, otk, recipient, v)}
	if err := wrap.Sign(otk); err != nil {
		t.Fatal(err)
	}
	return wrap
}

// JunkWrap is a gift wrap (kind 1059) to recipient dated at whose content
// is not NIP-44 (it opens for no one), signed by a fresh key.
func JunkWrap(t testing.TB, recipient, content string, at nostr.Timestamp) *nostr.Event {
	t.Helper()
	wrap := &nostr.Event{Kind: 1059, CreatedAt: at, Tags: nostr.Tags{{"p", recipient}}, Content: content}
	if err := wrap.Sign(nostr.GeneratePrivateKey()); err != nil {
		t.Fatal(err)
	}
	return wrap
}
