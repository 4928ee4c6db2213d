package nip98

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// Kind is the NIP-98 HTTP auth event kind: a signed statement "I call
// this URL with this method now".
const Kind = 27235

// NIP-98 bounds (docs/WEB.md#owner-sign-in).
const (
	// Window is how far an auth event's created_at may be from now,
	// either way.
	Window = 60 * time.Second
	// MaxHeader bounds the base64 of an "Authorization: Nostr" header: a
	// kind-27235 event is a few hundred bytes.
	MaxHeader = 4096
)

// ErrUnauthorized is matched (errors.Is) by every refusal of Verify and
// of Replay.Use but ErrBusy.
var ErrUnauthorized = errors.New("nip98: unauthorized")

// refusal is a NIP-98 refusal: its text may be shown to the caller, and
// it is ErrUnauthorized.
type refusal string

func (e refusal) Error() string        { return string(e) }
func (e refusal) Is(target error) bool { return target == ErrUnauthorized }

// NIP-98 refusals. Their text may be shown to the caller.
var (
	ErrNoAuth    error = refusal(`missing "Authorization: Nostr <base64 event>" header (NIP-98)`)
	ErrMalformed error = refusal("malformed NIP-98 authorization")
	ErrStale     error = refusal("NIP-98 event too old or in the future (created_at must be within 60 s of now)")
	ErrURL       error = refusal(`NIP-98 event's "u" tag is not this URL`)
	ErrMethod    error = refusal(`NIP-98 event's "method" tag is not this request's method`)
	ErrPayload   error = refusal(`NIP-98 event's "payload" tag is not the body's SHA-256`)
	ErrSig       error = refusal("NIP-98 event's signature does not verify")
	ErrReplay    error = refusal("NIP-98 event already used")
	// ErrBusy is not ErrUnauthorized: the caller may retry later.
	ErrBusy = errors.New("too many NIP-98 sign-ins at once: retry in a minute")
)

// Verify checks r's NIP-98 Authorization against url (the absolute URL
// the client was told to sign; the scheme is not compared, so http/https/
// ws/wss and a proxy ending TLS do not matter, nor does a trailing slash;
// host, path and query are), r's method, body (when not empty, the event's
// "payload" tag must be its SHA-256) and now, and returns the signer's
// pubkey and the event's id. It does not remember the event: see Replay
// and Guard.
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

// RequestURL is the URL r was sent to as the client names it: its Host
// header, then path and query (the scheme is not compared by Verify).
func RequestURL(r *http.Request) string {
	u := "http://" + r.Host + r.URL.Path
	if r.URL.RawQuery != "" {
		u += "?" + r.URL.RawQuery
	}
	return u
}

// decode reads the event out of "Nostr <base64>" (the scheme in any case),
// bounded by MaxHeader.
func decode(auth string) (*nostr.Event, error) {
	scheme, b64, ok := strings.Cut(strings.TrimSpace(auth), " ")
	if !ok || !strings.EqualFold(scheme, "Nostr") {
		return nil, ErrNoAuth
	}
	b64 = strings.TrimSpace(b64)
	if len(b64) > MaxHeader {
		return nil, fmt.Errorf("%w: longer than %d bytes", ErrMalformed, MaxHeader)
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("%w: not base64", ErrMalformed)
	}
	var evt nostr.Event
	if err := json.Unmarshal(raw, &evt); err != nil {
		return nil, fmt.Errorf("%w: not a Nostr event", ErrMalformed)
	}
	if evt.Kind != Kind {
		return nil, fmt.Errorf("%w: kind %d, want %d", ErrMalformed, evt.Kind, Kind)
	}
	return &evt, nil
}

// check verifies the event's time, URL, method, payload, id and
// signature (the signature last: it is the dear one).
func check(evt *nostr.Event, url, method string, body []byte, now time.Time) error {
	if d := now.Sub(evt.CreatedAt.Time()); d > Window || d < -Window {
		return ErrStale
	}
	if !sameURL(tagValue(evt, "u"), url) {
		return ErrURL
	}
	if !strings.EqualFold(tagValue(evt, "method"), method) {
		return ErrMethod
	}
	if len(body) > 0 {
		sum := sha256.Sum256(body)
		if !strings.EqualFold(tagValue(evt, "payload"), hex.EncodeToString(sum[:])) {
			return ErrPayload
		}
	}
	if !evt.CheckID() {
		return fmt.Errorf("%w: its id is computed incorrectly", ErrSig)
	}
	if ok, err := evt.CheckSignature(); err != nil || !ok {
		return ErrSig
	}
	return nil
}

// sameURL: u names want's host (any case), path (a trailing slash aside)
// and query; the scheme is not compared.
func sameURL(u, want string) bool {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return false
	}
	w, err := url.Parse(want)
	if err != nil {
		return false
	}
	return strings.EqualFold(p.Host, w.Host) &&
		strings.TrimRight(p.Path, "/") == strings.TrimRight(w.Path, "/") &&
		p.RawQuery == w.RawQuery
}

// tagValue is the first value of evt's tag name ("" without one).
func tagValue(evt *nostr.Event, name string) string {
	if t := evt.Tags.Find(name); len(t) > 1 {
		return t[1]
	}
	return ""
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
