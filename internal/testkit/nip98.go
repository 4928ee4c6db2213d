package testkit

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"

	"github.com/nbd-wtf/go-nostr"
)

// NIP98Header builds a NIP-98 Authorization header value (the node only
// verifies them: internal/nip98) for a request to url with
// method and body, signed by sk now. A random "nonce" tag makes every
// header a new event, so that two identical calls in one second are not
// taken for a replay by a server that refuses those.
func NIP98Header(sk, url, method string, body []byte) (string, error) {
	nonce := make([]byte, 8)
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	evt := nostr.Event{Kind: 27235, CreatedAt: nostr.Now(),
		Tags: nostr.Tags{{"u", url}, {"method", method}, {"nonce", hex.EncodeToString(nonce)}}}
	if len(body) > 0 {
		sum := sha256.Sum256(body)
		evt.Tags = append(evt.Tags, nostr.Tag{"payload", hex.EncodeToString(sum[:])})
	}
	if err := evt.Sign(sk); err != nil {
		return "", err
	}
	raw, err := evt.MarshalJSON()
	if err != nil {
		return "", err
	}
	return "Nostr " + base64.StdEncoding.EncodeToString(raw), nil
}
