package nip98

import (
	"bytes"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/testkit"
)

func request(t *testing.T, auth string, body []byte) *http.Request {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "http://relay.example/", bytes.NewReader(body))
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	return r
}

// signed is a kind-27235 event with tags, signed by sk at created.
func signed(t *testing.T, sk string, kind int, created time.Time, tags nostr.Tags) string {
	t.Helper()
	evt := nostr.Event{Kind: kind, CreatedAt: nostr.Timestamp(created.Unix()), Tags: tags}
	if err := evt.Sign(sk); err != nil {
		t.Fatal(err)
	}
	raw, _ := evt.MarshalJSON()
	return "Nostr " + base64.StdEncoding.EncodeToString(raw)
}

func TestVerify(t *testing.T) {
	sk := nostr.GeneratePrivateKey()
	pk, _ := nostr.GetPublicKey(sk)
	body := []byte(`{"method":"supportedmethods","params":[]}`)
	good, err := testkit.NIP98Header(sk, "wss://relay.example", "POST", body)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := Verify(request(t, good, body), "http://RELAY.example/", body, time.Now())
	if err != nil || got != pk {
		t.Fatalf("Verify = %q, %v; want %q", got, err, pk)
	}
	now := time.Now()
	u := nostr.Tag{"u", "http://relay.example/"}
	for name, c := range map[string]struct {
		auth string
		body []byte
		want string
	}{
		"no header":      {"", body, "missing \"Authorization"},
		"not Nostr":      {"Bearer x", body, "Nostr <base64 event>"},
		"not base64":     {"Nostr !!", body, "not base64"},
		"other body":     {good, []byte(`{}`), "payload"},
		"wrong kind":     {signed(t, sk, 1, now, nostr.Tags{u, {"method", "POST"}}), nil, "kind 1"},
		"too old":        {signed(t, sk, Kind, now.Add(-2*Window), nostr.Tags{u, {"method", "POST"}}), nil, "created_at"},
		"in the future":  {signed(t, sk, Kind, now.Add(2*Window), nostr.Tags{u, {"method", "POST"}}), nil, "created_at"},
		"other URL":      {signed(t, sk, Kind, now, nostr.Tags{{"u", "http://evil.example/"}, {"method", "POST"}}), nil, "\"u\""},
		"no method tag":  {signed(t, sk, Kind, now, nostr.Tags{u}), nil, "\"method\""},
		"no payload tag": {signed(t, sk, Kind, now, nostr.Tags{u, {"method", "POST"}}), body, "payload"},
	} {
		_, _, err := Verify(request(t, c.auth, c.body), "http://relay.example/", c.body, now)
		if !errors.Is(err, ErrUnauthorized) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrUnauthorized mentioning %q", name, err, c.want)
		}
	}
}

func TestVerify_TamperedSignature(t *testing.T) {
	sk := nostr.GeneratePrivateKey()
	evt := nostr.Event{Kind: Kind, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"u", "http://relay.example/"}, {"method", "POST"}}}
	if err := evt.Sign(sk); err != nil {
		t.Fatal(err)
	}
	evt.Sig = strings.Repeat("0", 128)
	raw, _ := evt.MarshalJSON()
	auth := "Nostr " + base64.StdEncoding.EncodeToString(raw)
	if _, _, err := Verify(request(t, auth, nil), "http://relay.example/", nil, time.Now()); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("a forged signature: %v", err)
	}
	if pk, err := Signer(auth); err != nil || pk != evt.PubKey {
		t.Fatalf("Signer = %q, %v", pk, err)
	}
}
