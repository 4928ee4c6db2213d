package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
)

func TestKeyGenerate_JSONDecodes(t *testing.T) {
	r := cli(t, nil, "key", "generate", "--json")
	if r.err != nil {
		t.Fatal(r.err)
	}
	var kp keypair
	decodeJSON(t, r.stdout, &kp)
	prefix, sk, err := nip19.Decode(kp.Nsec)
	if err != nil || prefix != "nsec" || sk != kp.SecretKey {
		t.Fatalf("nsec %q decodes to %v %v %v, want %s", kp.Nsec, prefix, sk, err, kp.SecretKey)
	}
	pk, err := nostr.GetPublicKey(kp.SecretKey)
	if err != nil || pk != kp.PublicKey {
		t.Fatalf("public key of the secret: got %s, want %s", pk, kp.PublicKey)
	}
	prefix, got, err := nip19.Decode(kp.Npub)
	if err != nil || prefix != "npub" || got != kp.PublicKey {
		t.Fatalf("npub %q decodes to %v %v %v", kp.Npub, prefix, got, err)
	}
}

func TestKeyGenerate_Text(t *testing.T) {
	r := cli(t, nil, "key", "generate")
	if r.err != nil {
		t.Fatal(r.err)
	}
	for _, want := range []string{"nsec1", "npub1", "secret key (hex)", "public key (hex)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestKeyGenerate_OutFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.nsec")
	r := cli(t, nil, "key", "generate", "--out", path, "--json")
	if r.err != nil {
		t.Fatal(r.err)
	}
	var kp keypair
	decodeJSON(t, r.stdout, &kp)
	if kp.Nsec != "" || kp.SecretKey != "" || strings.Contains(r.stdout, "nsec1") {
		t.Fatalf("the secret was printed although --out was given:\n%s", r.stdout)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Mode().Perm(); got != 0o600 {
		t.Errorf("mode = %v, want 0600", got)
	}
	b, _ := os.ReadFile(path)
	_, sk, err := nip19.Decode(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if pk, _ := nostr.GetPublicKey(sk.(string)); pk != kp.PublicKey {
		t.Errorf("file key's public key = %s, want %s", pk, kp.PublicKey)
	}

	again := cli(t, nil, "key", "generate", "--out", path)
	if again.err == nil || !strings.Contains(again.err.Error(), "already exists") {
		t.Fatalf("second --out to the same file: err = %v, want a refusal", again.err)
	}
	if b2, _ := os.ReadFile(path); string(b2) != string(b) {
		t.Error("the existing key file was changed")
	}
}
