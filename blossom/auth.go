package blossom

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// KindAuth is the Blossom authorization event (BUD-11).
const KindAuth = 24242

// Auth limits.
const (
	maxAuthHeader = 16 << 10         // bytes of the base64 event
	maxSkew       = 10 * time.Minute // how far in the future created_at may be
)

// readAuth reads the request's "Authorization: Nostr <base64 event>" for
// verb (upload, delete, list, get): a kind-24242 event, signed, not from
// the future, with a future expiration, a t tag naming verb and, if it
// has server tags, one naming host. No header: nil, nil.
func readAuth(r *http.Request, verb string) (*nostr.Event, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return nil, nil
	}
	token, ok := strings.CutPrefix(h, "Nostr ")
	if !ok || len(token) > maxAuthHeader {
		return nil, fmt.Errorf("%w: want \"Nostr <base64 kind-24242 event>\"", ErrAuth)
	}
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(token))
	if err != nil {
		b, err = base64.RawURLEncoding.DecodeString(strings.TrimRight(strings.TrimSpace(token), "="))
	}
	if err != nil {
		return nil, fmt.Errorf("%w: not base64", ErrAuth)
	}
	var evt nostr.Event
	if err := json.Unmarshal(b, &evt); err != nil {
		return nil, fmt.Errorf("%w: not a Nostr event", ErrAuth)
	}
	return &evt, checkAuth(&evt, verb, r.Host, time.Now())
}

// checkAuth checks evt as an authorization for verb on host at now.
func checkAuth(evt *nostr.Event, verb, host string, now time.Time) error {
	if evt.Kind != KindAuth {
		return fmt.Errorf("%w: kind %d, want %d", ErrAuth, evt.Kind, KindAuth)
	}
	if !evt.CheckID() {
		return fmt.Errorf("%w: bad event id", ErrAuth)
	}
	if ok, _ := evt.CheckSignature(); !ok {
		return fmt.Errorf("%w: bad signature", ErrAuth)
	}
	if evt.CreatedAt.Time().After(now.Add(maxSkew)) {
		return fmt.Errorf("%w: created_at is in the future", ErrAuth)
	}
	exp := evt.Tags.Find("expiration")
	if exp == nil {
		return fmt.Errorf("%w: missing \"expiration\" tag", ErrAuth)
	}
	if at, err := strconv.ParseInt(exp[1], 10, 64); err != nil || time.Unix(at, 0).Before(now) {
		return fmt.Errorf("%w: expired", ErrAuth)
	}
	if evt.Tags.FindWithValue("t", verb) == nil {
		return fmt.Errorf("%w: want a [\"t\", %q] tag", ErrAuth, verb)
	}
	return checkServer(evt, host)
}

// checkServer refuses an event scoped to other servers (BUD-11 "server"
// tags) than host.
func checkServer(evt *nostr.Event, host string) error {
	var servers []string
	for _, t := range evt.Tags {
		if len(t) >= 2 && t[0] == "server" {
			servers = append(servers, strings.ToLower(t[1]))
		}
	}
	h := strings.ToLower(host)
	name, _, _ := strings.Cut(h, ":")
	if len(servers) == 0 || slices.Contains(servers, h) || slices.Contains(servers, name) {
		return nil
	}
	return fmt.Errorf("%w: the event is for servers %v, not %s", ErrAuth, servers, host)
}

// hashes are the event's x tags.
func hashes(evt *nostr.Event) []string {
	var xs []string
	for _, t := range evt.Tags {
		if len(t) >= 2 && t[0] == "x" {
			xs = append(xs, t[1])
		}
	}
	return xs
}

// AuthTemplate is an unsigned authorization for verb (upload, delete,
// list, get) of the blobs xs, valid for ttl.
func AuthTemplate(verb, content string, ttl time.Duration, xs ...string) nostr.Event {
	now := time.Now()
	tags := nostr.Tags{{"t", verb}, {"expiration", strconv.FormatInt(now.Add(ttl).Unix(), 10)}}
	for _, x := range xs {
		tags = append(tags, nostr.Tag{"x", x})
	}
	return nostr.Event{Kind: KindAuth, CreatedAt: nostr.Timestamp(now.Unix()), Tags: tags, Content: content}
}

// AuthHeader is the Authorization header value carrying evt.
func AuthHeader(evt *nostr.Event) string {
	b, _ := json.Marshal(evt)
	return "Nostr " + base64.StdEncoding.EncodeToString(b)
}
