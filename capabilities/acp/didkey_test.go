package acp_test

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/multiformats/go-multibase"

	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/events"
)

// RFC 8032 §7.1 test 1: the Ed25519 seed and its public key.
const (
	edSeed = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"
	edPub  = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
)

// Both DID-key forms sign and verify; the signer is named as the spec's
// did:key (z6Mk… Ed25519, zQ3s… secp256k1) and, for secp256k1, as the
// same Nostr pubkey the {pubkey, sig} form gives.
func TestSignAs_DIDKey(t *testing.T) {
	tests := []struct {
		form, sk, keyType, didPrefix, pubkey string
	}{
		{acp.SigFormDIDKey, skAlice, acp.KeySecp256k1, "did:key:zQ3s", pubOf(t, skAlice)},
		{acp.SigFormDIDKeyEd25519, edSeed, acp.KeyEd25519, "did:key:z6Mk", ""},
		{acp.SigFormNostr, skBob, acp.KeySecp256k1, "did:key:zQ3s", pubOf(t, skBob)},
	}
	for _, tt := range tests {
		t.Run(tt.form, func(t *testing.T) {
			signed, err := acp.SignAs(weather(t), tt.sk, tt.form)
			if err != nil {
				t.Fatal(err)
			}
			s, err := acp.VerifySigner(signed)
			if err != nil {
				t.Fatalf("VerifySigner: %v\n%s", err, signed)
			}
			wantForm := acp.SigFormDIDKey
			if tt.form == acp.SigFormNostr {
				wantForm = acp.SigFormNostr
			}
			if s.Form != wantForm || s.KeyType != tt.keyType || s.PubKey != tt.pubkey || !strings.HasPrefix(s.DID, tt.didPrefix) {
				t.Errorf("signer = %+v", s)
			}
			if p := mustParse(t, signed); wantForm == acp.SigFormDIDKey && !strings.HasPrefix(p.Metadata.Signature.DIDKey, s.DID+"#z") {
				t.Errorf("parsed signature %+v", p.Metadata.Signature)
			}
			tampered := []byte(strings.Replace(string(signed), "weather assistant", "weather assistent", 1))
			if _, err := acp.VerifySigner(tampered); !errors.Is(err, acp.ErrBadSignature) {
				t.Errorf("tampered: %v", err)
			}
		})
	}
}

// The Ed25519 did:key carries the RFC 8032 public key under the
// ed25519-pub multicodec (0xed 0x01).
func TestSignAs_Ed25519DIDIsTheRFC8032Key(t *testing.T) {
	signed, err := acp.SignAs(weather(t), edSeed, acp.SigFormDIDKeyEd25519)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := acp.VerifySigner(signed)
	_, b, err := multibase.Decode(strings.TrimPrefix(s.DID, "did:key:"))
	if err != nil || len(b) != 34 || b[0] != 0xed || b[1] != 0x01 || hex.EncodeToString(b[2:]) != edPub {
		t.Errorf("did %s decodes to %x (%v)", s.DID, b, err)
	}
}

// The spec's literal form: a bare multibase signature, the signer being
// the author's did:key. Signed here independently of SignAs, from the
// documented definition (sha256 of the file with the signature removed).
func TestVerify_BareMultibaseWithAuthorDID(t *testing.T) {
	priv := ed25519.NewKeyFromSeed(mustHex(t, edSeed))
	did := "did:key:" + mb(t, append([]byte{0xed, 0x01}, priv.Public().(ed25519.PublicKey)...))
	unsigned := replace(t, weather(t), "  memory_scope: sc:weather\n",
		"  memory_scope: sc:weather\n  author: "+did+"\n  signature: \n")
	sum := sha256.Sum256(unsigned)
	sig := mb(t, ed25519.Sign(priv, sum[:]))
	signed := replace(t, unsigned, "  signature: \n", "  signature: "+sig+"\n")
	s, err := acp.VerifySigner(signed)
	if err != nil || s.DID != did || s.KeyType != acp.KeyEd25519 {
		t.Fatalf("VerifySigner = %+v, %v", s, err)
	}
	if got, _ := acp.Verify(signed); got != did {
		t.Errorf("Verify = %q, want the did", got)
	}
	noAuthor := replace(t, signed, "  author: "+did+"\n", "  author: Alice\n")
	if _, err := acp.Verify(noAuthor); !errors.Is(err, acp.ErrBadSignature) || !strings.Contains(err.Error(), "metadata.author to be the signer's did:key") {
		t.Errorf("no author did: %v", err)
	}
}

func TestVerify_DIDKeyRefusals(t *testing.T) {
	signed := string(mustSignAs(t, weather(t), skAlice, acp.SigFormDIDKey))
	p256 := "did:key:" + mb(t, append([]byte{0x80, 0x24}, make([]byte, 33)...))
	did := strings.SplitN(mustParse(t, []byte(signed)).Metadata.Signature.DIDKey, "#", 2)[0]
	tests := []struct{ name, old, new, msg string }{
		{"the spec's placeholder", `signature: "` + did + `#`, `signature: "zDIDSig1xyz…`, "needs metadata.author"},
		{"did:web signer", did, "did:web:example.com", "not a did:key"},
		{"P-256 key", did, p256, "not a key type verified here"},
		{"another secp256k1 key", did, didOf(t, skBob), "does not verify"},
		{"not multibase", `#z`, `#!`, "not a multibase"},
	}
	for _, tt := range tests {
		_, err := acp.Verify([]byte(strings.Replace(signed, tt.old, tt.new, 1)))
		if !errors.Is(err, acp.ErrBadSignature) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: Verify = %v, want ErrBadSignature ...%s...", tt.name, err, tt.msg)
		}
	}
}

func didOf(t testing.TB, sk string) string {
	signed := mustSignAs(t, weather(t), sk, acp.SigFormDIDKey)
	s, err := acp.VerifySigner(signed)
	if err != nil {
		t.Fatal(err)
	}
	return s.DID
}

func mustSignAs(t testing.TB, raw []byte, sk, form string) []byte {
	t.Helper()
	out, err := acp.SignAs(raw, sk, form)
	if err != nil {
		t.Fatalf("SignAs: %v", err)
	}
	return out
}

func mb(t testing.TB, b []byte) string {
	s, err := multibase.Encode(multibase.Base58BTC, b)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustHex(t testing.TB, s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A package signed in the DID-key form with the author's secp256k1 key is
// published as that author's kind-30199 event and read back; an Ed25519
// signer is not the event's Nostr author: FromEvent refuses the mismatch,
// and the relay's own check of the content accepts both.
func TestFromEvent_DIDKeySigned(t *testing.T) {
	signed := mustSignAs(t, weather(t), skAlice, acp.SigFormDIDKey)
	evt := signEvent(t, skAlice, acp.EventTemplate(mustParse(t, signed)))
	if err := events.ValidateCapability(evt); err != nil {
		t.Fatalf("the relay's check: %v", err)
	}
	if _, err := acp.FromEvent(evt, acp.Options{}); err != nil {
		t.Fatalf("FromEvent: %v", err)
	}
	ed := mustSignAs(t, weather(t), edSeed, acp.SigFormDIDKeyEd25519)
	evt = signEvent(t, skAlice, acp.EventTemplate(mustParse(t, ed)))
	if _, err := acp.FromEvent(evt, acp.Options{}); !errors.Is(err, acp.ErrEventMismatch) {
		t.Errorf("Ed25519-signed file in alice's event: %v", err)
	}
}
