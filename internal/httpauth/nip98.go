package httpauth

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// KindHTTPAuth is NIP-98's event kind: a signed statement "I call this
// URL with this method now".
const KindHTTPAuth = 27235

// NIP-98 bounds (docs/WEB.md#owner-sign-in).
const (
	// Window is how far an event's created_at may be from the node's
	// clock, either way.
	Window = 60 * time.Second
	// MaxNostrHeader bounds the base64 of an "Authorization: Nostr"
	// header: a NIP-98 event is a few hundred bytes.
	MaxNostrHeader = 4096
	// MaxSeen bounds the event ids remembered against replay (each for
	// 2*Window); past it new sign-ins are refused until some expire.
	MaxSeen = 4096
)

// NIP-98 refusals. Their text may be shown to the caller.
var (
	ErrNoNostrAuth  = errors.New(`missing "Authorization: Nostr <base64 event>" header (NIP-98)`)
	ErrBadNostrAuth = errors.New("malformed NIP-98 authorization")
	ErrNostrStale   = errors.New("NIP-98 event too old or in the future (created_at must be within 60 s of now)")
	ErrNostrURL     = errors.New(`NIP-98 event's "u" tag is not this URL`)
	ErrNostrMethod  = errors.New(`NIP-98 event's "method" tag is not this request's method`)
	ErrNostrSig     = errors.New("NIP-98 event's signature does not verify")
	ErrNostrReplay  = errors.New("NIP-98 event already used")
	ErrNostrBusy    = errors.New("too many NIP-98 sign-ins at once: retry in a minute")
)

// Nostr verifies NIP-98 "Authorization: Nostr" headers. The zero value is
// not usable: make one with NewNostr. It is safe for concurrent use.
type Nostr struct {
	now  func() time.Time
	mu   sync.Mutex
	seen map[string]time.Time // event id -> when it may be forgotten
}

// NewNostr returns a verifier reading the time from now (nil: time.Now).
func NewNostr(now func() time.Time) *Nostr {
	if now == nil {
		now = time.Now
	}
	return &Nostr{now: now, seen: map[string]time.Time{}}
}

// VerifyFor checks r's NIP-98 header and returns the signer's hex pubkey.
// The event must be kind 27235, signed, created within Window of now,
// name r's method and r's URL (host from the Host header, then path and
// query; the scheme is not compared, a proxy may end TLS), and not have
// been used before. A request body is not bound (no "payload" check):
// use it for requests whose meaning is the URL and method.
//
// admit (nil: everyone) is asked whether the signer may go on before the
// event is remembered: a refused signer's event is not, so keys the
// caller does not know cannot fill the replay memory (MaxSeen) and lock
// the known ones out. admit's error is returned as is.
func (n *Nostr) VerifyFor(r *http.Request, admit func(pubkey string) error) (string, error) {
	evt, err := nostrEvent(r)
	if err != nil {
		return "", err
	}
	if err := n.check(evt, r); err != nil {
		return "", err
	}
	if admit != nil {
		if err := admit(evt.PubKey); err != nil {
			return "", err
		}
	}
	return evt.PubKey, n.remember(evt.ID)
}

// nostrEvent decodes the header's event, bounded by MaxNostrHeader.
func nostrEvent(r *http.Request) (*nostr.Event, error) {
	scheme, b64, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Nostr") {
		return nil, ErrNoNostrAuth
	}
	b64 = strings.TrimSpace(b64)
	if len(b64) > MaxNostrHeader {
		return nil, fmt.Errorf("%w: longer than %d bytes", ErrBadNostrAuth, MaxNostrHeader)
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("%w: not base64", ErrBadNostrAuth)
	}
	var evt nostr.Event
	if err := json.Unmarshal(raw, &evt); err != nil {
		return nil, fmt.Errorf("%w: not a Nostr event", ErrBadNostrAuth)
	}
	if evt.Kind != KindHTTPAuth {
		return nil, fmt.Errorf("%w: kind %d, want %d", ErrBadNostrAuth, evt.Kind, KindHTTPAuth)
	}
	return &evt, nil
}

// check holds the rules on a decoded event.
func (n *Nostr) check(evt *nostr.Event, r *http.Request) error {
	at := evt.CreatedAt.Time()
	if d := n.now().Sub(at); d > Window || d < -Window {
		return ErrNostrStale
	}
	if !sameURL(tagValue(evt, "u"), r) {
		return ErrNostrURL
	}
	if !strings.EqualFold(tagValue(evt, "method"), r.Method) {
		return ErrNostrMethod
	}
	if ok, err := evt.CheckSignature(); err != nil || !ok {
		return ErrNostrSig
	}
	return nil
}

// sameURL: u names r's host, path and query.
func sameURL(u string, r *http.Request) bool {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return false
	}
	return strings.EqualFold(p.Host, r.Host) && p.Path == r.URL.Path && p.RawQuery == r.URL.RawQuery
}

// tagValue is the first value of evt's tag name ("" without one).
func tagValue(evt *nostr.Event, name string) string {
	if t := evt.Tags.Find(name); len(t) > 1 {
		return t[1]
	}
	return ""
}

// remember records id as used; it refuses a replay, and a new id when
// MaxSeen live ids are remembered already.
func (n *Nostr) remember(id string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	now := n.now()
	if until, ok := n.seen[id]; ok && now.Before(until) {
		return ErrNostrReplay
	}
	if len(n.seen) >= MaxSeen {
		for k, until := range n.seen {
			if !now.Before(until) {
				delete(n.seen, k)
			}
		}
	}
	if len(n.seen) >= MaxSeen {
		return ErrNostrBusy
	}
	n.seen[id] = now.Add(2 * Window)
	return nil
}
