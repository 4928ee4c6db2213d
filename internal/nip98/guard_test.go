package nip98_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/nip98"
)

// nip98 signs a kind-27235 event for method and u at created with sk and
// returns the Authorization header value; edit changes the event before
// signing.
func signedHeader(t *testing.T, sk, method, u string, created time.Time, edit func(*nostr.Event)) string {
	t.Helper()
	evt := nostr.Event{Kind: nip98.Kind, CreatedAt: nostr.Timestamp(created.Unix()),
		Tags: nostr.Tags{{"u", u}, {"method", method}}}
	if edit != nil {
		edit(&evt)
	}
	if err := evt.Sign(sk); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(evt)
	return "Nostr " + base64.StdEncoding.EncodeToString(raw)
}

func TestGuard_VerifyFor(t *testing.T) {
	sk := nostr.GeneratePrivateKey()
	pk, _ := nostr.GetPublicKey(sk)
	now := time.Unix(1_800_000_000, 0)
	const u = "http://node.example:7447/console/nostr-login"
	tampered := func(h string) string { // a valid event whose content changed after signing
		raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(h, "Nostr "))
		var evt nostr.Event
		json.Unmarshal(raw, &evt)
		evt.Tags = append(evt.Tags, nostr.Tag{"x", "y"})
		raw, _ = json.Marshal(evt)
		return "Nostr " + base64.StdEncoding.EncodeToString(raw)
	}
	for _, tc := range []struct {
		name, header string
		err          error
	}{
		{"valid", signedHeader(t, sk, "POST", u, now, nil), nil},
		{"https in u (a proxy ends TLS)", signedHeader(t, sk, "POST", "https://node.example:7447/console/nostr-login", now.Add(-30*time.Second), nil), nil},
		{"no header", "", nip98.ErrNoAuth},
		{"bearer", "Bearer abc", nip98.ErrNoAuth},
		{"not base64", "Nostr !!!", nip98.ErrMalformed},
		{"not an event", "Nostr " + base64.StdEncoding.EncodeToString([]byte("[1,2]")), nip98.ErrMalformed},
		{"too long", "Nostr " + strings.Repeat("A", nip98.MaxHeader+4), nip98.ErrMalformed},
		{"wrong kind", signedHeader(t, sk, "POST", u, now, func(e *nostr.Event) { e.Kind = 1 }), nip98.ErrMalformed},
		{"stale", signedHeader(t, sk, "POST", u, now.Add(-61*time.Second), nil), nip98.ErrStale},
		{"future", signedHeader(t, sk, "POST", u, now.Add(61*time.Second), nil), nip98.ErrStale},
		{"other path", signedHeader(t, sk, "POST", "http://node.example:7447/console", now, nil), nip98.ErrURL},
		{"other host", signedHeader(t, sk, "POST", "http://evil.example/console/nostr-login", now, nil), nip98.ErrURL},
		{"no u", signedHeader(t, sk, "POST", u, now, func(e *nostr.Event) { e.Tags = e.Tags[1:] }), nip98.ErrURL},
		{"other method", signedHeader(t, sk, "GET", u, now, nil), nip98.ErrMethod},
		{"bad signature", tampered(signedHeader(t, sk, "POST", u, now, nil)), nip98.ErrSig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := nip98.NewGuard(func() time.Time { return now })
			r := httptest.NewRequest("POST", "http://node.example:7447/console/nostr-login", nil)
			if tc.header != "" {
				r.Header.Set("Authorization", tc.header)
			}
			got, err := v.VerifyFor(r, nil)
			if !errors.Is(err, tc.err) {
				t.Fatalf("Verify: %v, want %v", err, tc.err)
			}
			if err == nil && got != pk {
				t.Fatalf("Verify: signer %s, want %s", got, pk)
			}
		})
	}
}

// An event is good once: the same header again is a replay, until it is
// too old to pass anyway.
func TestGuard_VerifyRefusesReplay(t *testing.T) {
	sk := nostr.GeneratePrivateKey()
	now := time.Unix(1_800_000_000, 0)
	v := nip98.NewGuard(func() time.Time { return now })
	h := signedHeader(t, sk, "POST", "http://n.example/login", now, nil)
	for i, want := range []error{nil, nip98.ErrReplay} {
		r := httptest.NewRequest("POST", "http://n.example/login", nil)
		r.Header.Set("Authorization", h)
		if _, err := v.VerifyFor(r, nil); !errors.Is(err, want) {
			t.Fatalf("use %d: %v, want %v", i+1, err, want)
		}
	}
}

// The replay memory is bounded: past MaxSeen live events a new one is
// refused with ErrBusy; once they expire, sign-ins work again.
func TestGuard_VerifySeenIsBounded(t *testing.T) {
	sk := nostr.GeneratePrivateKey()
	now := time.Unix(1_800_000_000, 0)
	v := nip98.NewGuard(func() time.Time { return now })
	verify := func(content string) error {
		r := httptest.NewRequest("POST", "http://n.example/login", nil)
		r.Header.Set("Authorization", signedHeader(t, sk, "POST", "http://n.example/login", now, func(e *nostr.Event) { e.Content = content }))
		_, err := v.VerifyFor(r, nil)
		return err
	}
	for i := range nip98.MaxSeen {
		if err := verify(strings.Repeat("x", i%7) + string(rune('a'+i%26)) + time.Duration(i).String()); err != nil {
			t.Fatalf("sign-in %d: %v", i, err)
		}
	}
	if err := verify("one too many"); !errors.Is(err, nip98.ErrBusy) {
		t.Fatalf("past MaxSeen: %v, want ErrBusy", err)
	}
	now = now.Add(2*nip98.Window + time.Second)
	if err := verify("later"); err != nil {
		t.Fatalf("once the remembered events expired: %v, want a sign-in", err)
	}
}

// A signer admit refuses is not remembered: MaxSeen refused sign-ins
// leave room for an admitted one.
func TestGuard_VerifyForRemembersOnlyAdmitted(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	v := nip98.NewGuard(func() time.Time { return now })
	owner := nostr.GeneratePrivateKey()
	ownerPK, _ := nostr.GetPublicKey(owner)
	errStranger := errors.New("not an owner")
	admit := func(pk string) error {
		if pk != ownerPK {
			return errStranger
		}
		return nil
	}
	stranger := nostr.GeneratePrivateKey()
	for i := range nip98.MaxSeen + 1 {
		r := httptest.NewRequest("POST", "http://n.example/login", nil)
		r.Header.Set("Authorization", signedHeader(t, stranger, "POST", "http://n.example/login", now, func(e *nostr.Event) { e.Content = time.Duration(i).String() }))
		if _, err := v.VerifyFor(r, admit); !errors.Is(err, errStranger) {
			t.Fatalf("stranger %d: %v, want admit's refusal", i, err)
		}
	}
	r := httptest.NewRequest("POST", "http://n.example/login", nil)
	r.Header.Set("Authorization", signedHeader(t, owner, "POST", "http://n.example/login", now, nil))
	if got, err := v.VerifyFor(r, admit); err != nil || got != ownerPK {
		t.Fatalf("the owner after %d strangers: %s, %v", nip98.MaxSeen+1, got, err)
	}
}

// BenchmarkGuard_Verify is what one NIP-98 sign-in costs the node (a
// stranger's included: decode, checks, one BIP-340 verification).
func BenchmarkGuard_Verify(b *testing.B) {
	sk := nostr.GeneratePrivateKey()
	now := time.Now()
	v := nip98.NewGuard(func() time.Time { return now })
	headers := make([]string, b.N)
	for i := range headers {
		evt := nostr.Event{Kind: nip98.Kind, CreatedAt: nostr.Timestamp(now.Unix()), Content: time.Duration(i).String(),
			Tags: nostr.Tags{{"u", "http://n.example/login"}, {"method", "POST"}}}
		evt.Sign(sk)
		raw, _ := json.Marshal(evt)
		headers[i] = "Nostr " + base64.StdEncoding.EncodeToString(raw)
	}
	refuse := errors.New("not an owner")
	b.ResetTimer()
	for i := range b.N {
		r := httptest.NewRequest("POST", "http://n.example/login", nil)
		r.Header.Set("Authorization", headers[i])
		if _, err := v.VerifyFor(r, func(string) error { return refuse }); err != refuse {
			b.Fatal(err)
		}
	}
}
