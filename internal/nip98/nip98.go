package nip98

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// Kind is the NIP-98 HTTP auth event kind.
const Kind = 27235

// Window is how far an auth event's created_at may be from now, either way.
const Window = 60 * time.Second

// maxHeader bounds the Authorization header read (a kind-27235 event is
// a few hundred bytes).
const maxHeader = 8 << 10

// ErrUnauthorized is wrapped by every refusal of Verify.
var ErrUnauthorized = errors.New("nip98: unauthorized")

// Verify checks r's NIP-98 Authorization against url (the absolute URL the
// client was told to sign; compared without scheme, so http/https/ws/wss
// and a trailing slash do not matter), r's method, body and now, and
// returns the signer's pubkey and the event's id.
func Verify(r *http.Request, url string, body []byte, now time.Time) (pubkey, id string, err error) {
	evt, err := decode(r.Header.Get("Authorization"))
	if err != nil {
		return "", "", err
	}
	if err := check(evt, url, r.Method, body, now); err != nil {
		return "", "", err
	}
	return evt.PubKey, evt.ID, nil
}

// decode reads the event out of "Nostr <base64>".
func decode(auth string) (*nostr.Event, error) {
	if auth == "" {
		return nil, fmt.Errorf("%w: no Authorization header (want NIP-98 \"Nostr <base64 event>\")", ErrUnauthorized)
	}
	if len(auth) > maxHeader {
		return nil, fmt.Errorf("%w: Authorization header over %d bytes", ErrUnauthorized, maxHeader)
	}
	b64, ok := strings.CutPrefix(auth, "Nostr ")
	if !ok {
		return nil, fmt.Errorf("%w: Authorization is not \"Nostr <base64 event>\"", ErrUnauthorized)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
	if err != nil {
		return nil, fmt.Errorf("%w: Authorization is not base64", ErrUnauthorized)
	}
	var evt nostr.Event
	if err := evt.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("%w: Authorization is not a Nostr event", ErrUnauthorized)
	}
	return &evt, nil
}

// check verifies the event's kind, signature, time, URL, method and payload.
func check(evt *nostr.Event, url, method string, body []byte, now time.Time) error {
	if evt.Kind != Kind {
		return fmt.Errorf("%w: auth event kind %d, want %d", ErrUnauthorized, evt.Kind, Kind)
	}
	if !evt.CheckID() {
		return fmt.Errorf("%w: auth event id is computed incorrectly", ErrUnauthorized)
	}
	if ok, _ := evt.CheckSignature(); !ok {
		return fmt.Errorf("%w: auth event signature is invalid", ErrUnauthorized)
	}
	if d := now.Sub(evt.CreatedAt.Time()); d > Window || d < -Window {
		return fmt.Errorf("%w: auth event created_at is more than %s from now", ErrUnauthorized, Window)
	}
	if u := evt.Tags.GetFirst([]string{"u"}); u == nil || len(*u) < 2 || bareURL((*u)[1]) != bareURL(url) {
		return fmt.Errorf("%w: auth event \"u\" tag must be %s", ErrUnauthorized, url)
	}
	if m := evt.Tags.GetFirst([]string{"method"}); m == nil || len(*m) < 2 || !strings.EqualFold((*m)[1], method) {
		return fmt.Errorf("%w: auth event \"method\" tag must be %s", ErrUnauthorized, method)
	}
	if len(body) > 0 {
		sum := sha256.Sum256(body)
		if p := evt.Tags.GetFirst([]string{"payload"}); p == nil || len(*p) < 2 || !strings.EqualFold((*p)[1], hex.EncodeToString(sum[:])) {
			return fmt.Errorf("%w: auth event \"payload\" tag must be the body's SHA-256", ErrUnauthorized)
		}
	}
	return nil
}

// bareURL is url without its scheme and trailing slash, host lower-cased.
func bareURL(url string) string {
	if i := strings.Index(url, "://"); i >= 0 {
		url = url[i+3:]
	}
	host, path, _ := strings.Cut(url, "/")
	return strings.ToLower(host) + "/" + strings.TrimRight(path, "/")
}

// Header builds the Authorization header value for a request to url with
// method and body, signed by sk now. A random "nonce" tag makes every
// header a new event, so that two identical calls in one second are not
// taken for a replay by a server that refuses those.
func Header(sk, url, method string, body []byte) (string, error) {
	nonce := make([]byte, 8)
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	evt := nostr.Event{Kind: Kind, CreatedAt: nostr.Now(),
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

// Signer is the pubkey an Authorization header claims, unverified: a
// cheap look before Verify, to refuse a caller who could never be
// authorized without checking a signature.
func Signer(auth string) (string, error) {
	evt, err := decode(auth)
	if err != nil {
		return "", err
	}
	return evt.PubKey, nil
}
