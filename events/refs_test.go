package events_test

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/nbd-wtf/go-nostr/nip19"
)

// NIP-19's own test vectors.
const (
	vecNpub     = "npub10elfcs4fr0l0r8af98jlmgdh9c8tcxjvz9qkw038js35mp4dma8qzvjptg"
	vecNpubHex  = "7e7e9c42a91bfef19fa929e5fda1b72e0ebc1a4c1141673e2794234d86addf4e"
	vecNsec     = "nsec1vl029mgpspedva04g90vltkh6fvh240zqtv9k0t9af8935ke9laqsnlfe5"
	vecNsecHex  = "67dea2ed018072d675f5415ecfaed7d2597555e202d85b3d65ea4e58d2d92ffa"
	vecNprofile = "nprofile1qqsrhuxx8l9ex335q7he0f09aej04zpazpl0ne2cgukyawd24mayt8gpp4mhxue69uhhytnc9e3k7mgpz4mhxue69uhkg6nzv9ejuumpv34kytnrdaksjlyr9p"
	vecProfHex  = "3bf0c63fcb93463407af97a5e5ee64fa883d107ef9e558472c4eb9aaaefa459d"
)

// mustFor returns a helper that unwraps (string, error) or fails t.
func mustFor(t *testing.T) func(string, error) string {
	return func(s string, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}

func TestParsePubKey(t *testing.T) {
	pk := testkit.NewKey(t).PK
	must := mustFor(t)
	npub := must(nip19.EncodePublicKey(pk))
	nprofile := must(nip19.EncodeProfile(pk, []string{"wss://relay.example.com"}))
	tests := []struct {
		in, want string
	}{
		{vecNpub, vecNpubHex},
		{vecNprofile, vecProfHex},
		{npub, pk},
		{nprofile, pk},
		{"nostr:" + npub, pk},
		{"  " + strings.ToUpper(npub) + "\n", pk},
		{pk, pk},
		{strings.ToUpper(pk), pk},
	}
	for _, tt := range tests {
		got, err := events.ParsePubKey(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParsePubKey(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", pk[:63], pk + "0", "g" + pk[1:], vecNpub[:len(vecNpub)-1] + "x", vecNsec,
		must(nip19.EncodeNote(pk))} {
		if _, err := events.ParsePubKey(bad); !errors.Is(err, events.ErrBadPubKey) {
			t.Errorf("ParsePubKey(%q) error = %v, want ErrBadPubKey", bad, err)
		}
	}
	if _, err := events.ParsePubKey(vecNsec); strings.Contains(err.Error(), vecNsec[5:]) {
		t.Errorf("error echoes the secret key: %v", err)
	}
}

func TestParseSecretKey(t *testing.T) {
	sk := testkit.NewKey(t).SK
	must := mustFor(t)
	nsec := must(nip19.EncodePrivateKey(sk))
	tests := []struct{ in, want string }{
		{vecNsec, vecNsecHex},
		{nsec, sk},
		{" " + sk + "\n", sk},
		{strings.ToUpper(sk), sk},
	}
	for _, tt := range tests {
		got, err := events.ParseSecretKey(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseSecretKey(...) = %q, %v; want %q", got, err, tt.want)
		}
	}
	order := "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141"
	for _, bad := range []string{"", vecNpub, sk[:10], strings.Repeat("0", 64), order, strings.Repeat("f", 64), corruptLast(nsec)} {
		_, err := events.ParseSecretKey(bad)
		if !errors.Is(err, events.ErrBadSecretKey) {
			t.Errorf("ParseSecretKey(bad) error = %v, want ErrBadSecretKey", err)
		}
		if len(bad) > 8 && strings.Contains(err.Error(), bad) {
			t.Errorf("error echoes the input: %v", err)
		}
	}
}

func TestParseRef(t *testing.T) {
	pk := testkit.NewKey(t).PK
	must := mustFor(t)
	id := hexID(0xabc)
	relays := []string{"wss://relay.example.com"}
	tests := []struct {
		name string
		in   string
		want events.Ref
	}{
		{"hex", id, events.Ref{ID: id}},
		{"upper hex", strings.ToUpper(id), events.Ref{ID: id}},
		{"note", must(nip19.EncodeNote(id)), events.Ref{ID: id}},
		{"nevent", must(nip19.EncodeEvent(id, relays, pk)), events.Ref{ID: id, Author: pk, Relays: relays}},
		{"nevent bare", must(nip19.EncodeEvent(id, nil, "")), events.Ref{ID: id}},
		{"nevent with kind", "nostr:" + neventWithKind(id, pk, 4199), events.Ref{ID: id, Author: pk, Kind: 4199}},
		{"naddr", must(nip19.EncodeEntity(pk, 30199, "notes@1.0.0", relays)),
			events.Ref{Kind: 30199, Author: pk, Identifier: "notes@1.0.0", Relays: relays}},
		{"naddr of a replaceable kind, empty d", must(nip19.EncodeEntity(pk, 14199, "", nil)),
			events.Ref{Kind: 14199, Author: pk}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := events.ParseRef(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseRef_Refuses(t *testing.T) {
	pk := testkit.NewKey(t).PK
	must := mustFor(t)
	pkb, _ := hex.DecodeString(pk)
	// An naddr whose kind TLV is one byte long makes nip19.Decode panic.
	shortKind := append(append([]byte{0, 1, 'x', 2, 32}, pkb...), 3, 1, 5)
	tests := []string{
		"", "abc", hexID(1)[:63], vecNpub, vecNsec,
		must(nip19.EncodeEntity(pk, 30199, "", nil)), // addressable kind needs a d
		bech32Encode("naddr", shortKind),
		bech32Encode("nevent", []byte{0, 3, 1, 2, 3}),
		bech32Encode("nfoo", pkb),
	}
	for _, in := range tests {
		if _, err := events.ParseRef(in); !errors.Is(err, events.ErrBadRef) {
			t.Errorf("ParseRef(%q) error = %v, want ErrBadRef", in, err)
		}
	}
}

// neventWithKind encodes an nevent with a kind TLV, which nip19.EncodeEvent omits.
func neventWithKind(id, author string, kind int) string {
	idb, _ := hex.DecodeString(id)
	ab, _ := hex.DecodeString(author)
	tlv := append(append([]byte{0, 32}, idb...), 2, 32)
	tlv = append(append(tlv, ab...), 3, 4)
	return bech32Encode("nevent", binary.BigEndian.AppendUint32(tlv, uint32(kind)))
}

func TestBech32Encode_MatchesNIP19(t *testing.T) {
	raw, _ := hex.DecodeString(vecNpubHex)
	if got := bech32Encode("npub", raw); got != vecNpub {
		t.Fatalf("test encoder is wrong: %s", got)
	}
}

func TestIsHex64(t *testing.T) {
	tests := map[string]bool{
		hexID(1): true, strings.Repeat("f", 64): true,
		"": false, hexID(1)[1:]: false, strings.ToUpper(strings.Repeat("a", 64)): false,
		strings.Repeat("g", 64): false, hexID(1) + "0": false,
	}
	for in, want := range tests {
		if got := events.IsHex64(in); got != want {
			t.Errorf("IsHex64(%q) = %v", in, got)
		}
	}
}

// corruptLast changes the last character of a bech32 string (its checksum).
func corruptLast(s string) string {
	last := byte('q')
	if s[len(s)-1] == 'q' {
		last = 'p'
	}
	return s[:len(s)-1] + string(last)
}

func TestParsePubKeyHints(t *testing.T) {
	pk := testkit.NewKey(t).PK
	must := mustFor(t)
	pkb, _ := hex.DecodeString(pk)
	for _, in := range []string{pk, "nostr:" + must(nip19.EncodePublicKey(pk))} {
		if got, relays, err := events.ParsePubKeyHints(in); err != nil || got != pk || relays != nil {
			t.Errorf("ParsePubKeyHints(%.20s…) = %s, %v, %v", in, got, relays, err)
		}
	}
	got, relays, err := events.ParsePubKeyHints(vecNprofile)
	if err != nil || got != vecProfHex || len(relays) != 2 {
		t.Errorf("ParsePubKeyHints(nprofile) = %s, %v, %v", got, relays, err)
	}
	shortKind := append(append([]byte{0, 1, 'x', 2, 32}, pkb...), 3, 1, 5)
	for _, in := range []string{"", vecNsec, "naddr1qqqqxqgpwyvqvv", bech32Encode("naddr", shortKind), bech32Encode("nprofile", []byte{0, 3, 1, 2, 3})} {
		if _, _, err := events.ParsePubKeyHints(in); !errors.Is(err, events.ErrBadPubKey) {
			t.Errorf("ParsePubKeyHints(%q) error = %v, want ErrBadPubKey", in, err)
		}
	}
}
