package acp_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/capabilities/acp"
)

func pubOf(t testing.TB, sk string) string {
	t.Helper()
	pk, err := nostr.GetPublicKey(sk)
	if err != nil {
		t.Fatal(err)
	}
	return pk
}

func TestSign_VerifyRoundTrip(t *testing.T) {
	for _, name := range []string{"note.acp.yaml", "weatherreporter.acp.yaml"} {
		t.Run(name, func(t *testing.T) {
			raw := readTestdata(t, name)
			signed := mustSign(t, raw, skAlice)
			pk, err := acp.Verify(signed)
			if err != nil || pk != pubOf(t, skAlice) {
				t.Fatalf("Verify = %q, %v", pk, err)
			}
			p := mustParse(t, signed)
			if p.Metadata.Signature == nil || p.Metadata.Signature.PubKey != pk {
				t.Errorf("parsed signature %+v", p.Metadata.Signature)
			}
		})
	}
}

// Signing only adds the signature entry: every other byte is kept.
func TestSign_KeepsTheFile(t *testing.T) {
	raw := note(t)
	signed := mustSign(t, raw, skAlice)
	block := "  signature:\n    pubkey: \"" + pubOf(t, skAlice) + "\"\n    sig: \""
	i := bytes.Index(signed, []byte(block))
	if i < 0 {
		t.Fatalf("no signature block in\n%s", signed)
	}
	end := i + bytes.IndexByte(signed[i+len(block):], '\n') + len(block) + 1
	if got := string(signed[:i]) + string(signed[end:]); got != string(raw) {
		t.Errorf("the file changed outside the signature entry:\n%s", got)
	}
	// The entry closes metadata: right before schema.
	if !strings.HasPrefix(string(signed[end:]), "schema: |") {
		t.Errorf("entry not at the end of metadata: %q", signed[end:end+20])
	}
}

// Re-signing replaces the entry where it stands, with the new key.
func TestSign_Replaces(t *testing.T) {
	raw := replace(t, weather(t), "  memory_scope: sc:weather\n",
		"  signature: {pubkey: \"x\", sig: \"y\"}\n  memory_scope: sc:weather\n")
	signed := mustSign(t, raw, skBob)
	if strings.Contains(string(signed), `pubkey: "x"`) || strings.Count(string(signed), "signature:") != 1 {
		t.Fatalf("old entry kept:\n%s", signed)
	}
	if !strings.Contains(string(signed), "sig: \"") || !strings.Contains(string(signed), "\"\n  memory_scope: sc:weather\n") {
		t.Errorf("entry not in place:\n%s", signed)
	}
	again := mustSign(t, signed, skAlice)
	if pk, err := acp.Verify(again); err != nil || pk != pubOf(t, skAlice) {
		t.Errorf("re-signed: %q %v", pk, err)
	}
	if strings.Count(string(again), "signature:") != 1 || len(again) != len(signed) {
		t.Errorf("re-signing grew the file:\n%s", again)
	}
}

func TestSign_CRLF(t *testing.T) {
	raw := bytes.ReplaceAll(weather(t), []byte("\n"), []byte("\r\n"))
	signed := mustSign(t, raw, skAlice)
	if bytes.Contains(bytes.ReplaceAll(signed, []byte("\r\n"), nil), []byte("\n")) {
		t.Error("a bare \\n in a CRLF file")
	}
	mustParse(t, signed)
}

func TestSign_Refusals(t *testing.T) {
	tests := []struct{ name, raw, sk, msg string }{
		{"bad key", string(weather(&testing.T{})), "nope", "not a secret key"},
		{"flow metadata", "metadata: {id: x}\nschema: x\n", skAlice, "block mapping"},
		{"no metadata", "schema: x\n", skAlice, "no metadata"},
		{"not YAML", "metadata: [\n", skAlice, "not YAML"},
	}
	for _, tt := range tests {
		if _, err := acp.SignAs([]byte(tt.raw), tt.sk, acp.SigFormNostr); err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: Sign = %v, want ...%s...", tt.name, err, tt.msg)
		}
	}
}

// Any change after signing fails Verify, even one space in the prompt.
func TestVerify_Tampered(t *testing.T) {
	signed := mustSign(t, note(t), skAlice)
	tests := []struct{ name, old, new string }{
		{"space in the prompt", "You are Note Assistant.", "You are Note  Assistant."},
		{"trailing newline", "# ========= End of ACP =========\n", "# ========= End of ACP =========\n\n"},
		{"comment", "# built-in tool", "# builtin tool"},
		{"version", "note@1.0.0", "note@1.0.1"},
	}
	sigHex := mustParse(t, signed).Metadata.Signature.Sig
	tests = append(tests, struct{ name, old, new string }{"sig unquoted", `sig: "` + sigHex + `"`, `sig: ` + sigHex})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := []byte(strings.Replace(string(signed), tt.old, tt.new, 1))
			if _, err := acp.Verify(bad); !errors.Is(err, acp.ErrBadSignature) {
				t.Errorf("Verify = %v, want ErrBadSignature", err)
			}
		})
	}
	// Every single-byte flip outside the sig value fails too (sampled).
	for i := 0; i < len(signed); i += 7 {
		bad := bytes.Clone(signed)
		bad[i] ^= 0x01
		if pk, err := acp.Verify(bad); err == nil {
			t.Fatalf("flip at %d verified as %s", i, pk)
		}
	}
}

func TestVerify_Unsigned(t *testing.T) {
	if _, err := acp.Verify(note(t)); !errors.Is(err, acp.ErrUnsigned) {
		t.Errorf("Verify(unsigned) = %v", err)
	}
}

func TestVerify_Malformed(t *testing.T) {
	signed := string(mustSign(t, weather(t), skAlice))
	pk := pubOf(t, skAlice)
	tests := []struct{ name, old, new string }{
		{"short sig", `sig: "`, `sig: "ab`},
		{"pubkey of another key", pk, pubOf(t, skBob)},
		{"string signature", "  signature:\n", "  signature: zDIDSig1xyz\n  signaturex:\n"},
	}
	for _, tt := range tests {
		bad := strings.Replace(signed, tt.old, tt.new, 1)
		if _, err := acp.Verify([]byte(bad)); !errors.Is(err, acp.ErrBadSignature) {
			t.Errorf("%s: Verify = %v, want ErrBadSignature", tt.name, err)
		}
	}
}

// The definition in docs/ACP.md, implemented independently: remove the
// first occurrence of the sig's hex, sha256, BIP-340 verify.
func TestVerify_MatchesTheDocumentedDigest(t *testing.T) {
	signed := mustSign(t, weather(t), skBob)
	p := mustParse(t, signed)
	sigHex := p.Metadata.Signature.Sig
	blanked := strings.Replace(string(signed), sigHex, "", 1)
	if !strings.Contains(blanked, `sig: ""`) {
		t.Fatalf("blanked file has no empty sig:\n%s", blanked)
	}
	sum := sha256.Sum256([]byte(blanked))
	sb, _ := hex.DecodeString(sigHex)
	pb, _ := hex.DecodeString(p.Metadata.Signature.PubKey)
	sig, err1 := schnorr.ParseSignature(sb)
	pub, err2 := schnorr.ParsePubKey(pb)
	if err1 != nil || err2 != nil || !sig.Verify(sum[:], pub) {
		t.Fatal("the documented digest does not verify")
	}
	if d, ok := acp.Digest(signed, sigHex); !ok || d != sum {
		t.Error("Digest disagrees with the documented definition")
	}
}

// A file whose metadata ends in a block scalar that keeps its trailing
// lines (|+) cannot take the entry after it without changing that value.
func TestSign_RefusesToChangeTheValue(t *testing.T) {
	raw := replace(t, weather(t), "    require: [] # This capability might not use state.* tools directly\n",
		"    require: []\n  description: |+\n    kept\n\n")
	raw = replace(t, raw, `  description: "Provides weather forecasts and can message contacts."`+"\n", "")
	if _, err := acp.SignAs(raw, skAlice, acp.SigFormNostr); err == nil || !strings.Contains(err.Error(), "would change the package") {
		t.Errorf("Sign = %v", err)
	}
}
