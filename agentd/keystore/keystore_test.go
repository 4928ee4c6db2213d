package keystore_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/keystore"
)

func open(t *testing.T, dir string, opts keystore.Options) *keystore.Store {
	t.Helper()
	ks, err := keystore.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

func TestStore_Create_plain(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "agents")
	ks := open(t, dir, keystore.Options{})
	pk, err := ks.Create(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, pk+".key"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, mode %v", err, fi.Mode())
	}
	if di, _ := os.Stat(dir); di.Mode().Perm() != 0o700 {
		t.Errorf("dir mode = %v, want 0700", di.Mode().Perm())
	}

	// A fresh store (no cache) reads it back and signs with it.
	ks2 := open(t, dir, keystore.Options{})
	sk, err := ks2.Secret(t.Context(), pk)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := nostr.GetPublicKey(sk); got != pk {
		t.Errorf("secret belongs to %s, want %s", got, pk)
	}
	evt := nostr.Event{Kind: 1, CreatedAt: nostr.Now(), Content: "hi"}
	if err := ks2.Sign(t.Context(), pk, &evt); err != nil {
		t.Fatal(err)
	}
	if ok, _ := evt.CheckSignature(); !ok || evt.PubKey != pk {
		t.Errorf("signed event: pubkey %s, signature ok %v", evt.PubKey, ok)
	}
	if enc, _ := ks2.Encrypted(t.Context(), pk); enc {
		t.Error("a key written without a passphrase reads as encrypted")
	}
	if list, _ := ks2.List(t.Context()); len(list) != 1 || list[0] != pk {
		t.Errorf("list = %v", list)
	}
}

func TestStore_Create_nip49(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "agents")
	ks := open(t, dir, keystore.Options{Passphrase: "correct horse battery staple"}) // DefaultLogN
	pk, err := ks.Create(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, pk+".key"))
	if !strings.HasPrefix(string(raw), "ncryptsec1") {
		t.Fatalf("key file = %.16q..., want an ncryptsec", raw)
	}

	for _, tc := range []struct {
		name, passphrase string
		want             error
	}{
		{"right passphrase", "correct horse battery staple", nil},
		{"wrong passphrase", "correct horse battery stapler", keystore.ErrWrongPassphrase},
		{"no passphrase", "", keystore.ErrPassphraseRequired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sk, err := open(t, dir, keystore.Options{Passphrase: tc.passphrase}).Secret(t.Context(), pk)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if tc.want == nil {
				if got, _ := nostr.GetPublicKey(sk); got != pk {
					t.Errorf("decrypted key belongs to %s", got)
				}
			}
		})
	}
}

func TestStore_Secret_refusals(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "agents")
	ks := open(t, dir, keystore.Options{})
	pk, _ := ks.Create(t.Context())
	other, _ := ks.Create(t.Context())
	path := func(p string) string { return filepath.Join(dir, p+".key") }

	t.Run("group readable", func(t *testing.T) {
		os.Chmod(path(pk), 0o640)
		defer os.Chmod(path(pk), 0o600)
		if _, err := open(t, dir, keystore.Options{}).Secret(t.Context(), pk); !errors.Is(err, keystore.ErrInsecureFile) {
			t.Errorf("err = %v, want ErrInsecureFile", err)
		}
	})
	t.Run("another agent's key", func(t *testing.T) {
		b, _ := os.ReadFile(path(other))
		fake := filepath.Join(dir, strings.Repeat("ab", 32)+".key")
		os.WriteFile(fake, b, 0o600)
		if _, err := open(t, dir, keystore.Options{}).Secret(t.Context(), strings.Repeat("ab", 32)); !errors.Is(err, keystore.ErrBadKeyFile) {
			t.Errorf("err = %v, want ErrBadKeyFile", err)
		}
	})
	t.Run("garbage", func(t *testing.T) {
		pkG := strings.Repeat("cd", 32)
		os.WriteFile(filepath.Join(dir, pkG+".key"), []byte("hello"), 0o600)
		if _, err := open(t, dir, keystore.Options{}).Secret(t.Context(), pkG); !errors.Is(err, keystore.ErrBadKeyFile) {
			t.Errorf("err = %v, want ErrBadKeyFile", err)
		}
	})
	t.Run("missing and path tricks", func(t *testing.T) {
		if _, err := ks.Secret(t.Context(), strings.Repeat("ef", 32)); !errors.Is(err, keystore.ErrNotFound) {
			t.Errorf("missing: %v", err)
		}
		if _, err := ks.Secret(t.Context(), "../../etc/passwd"); !errors.Is(err, keystore.ErrBadPubKey) {
			t.Errorf("path: %v", err)
		}
	})
	t.Run("delete", func(t *testing.T) {
		if err := ks.Delete(t.Context(), pk); err != nil {
			t.Fatal(err)
		}
		if _, err := ks.Secret(t.Context(), pk); !errors.Is(err, keystore.ErrNotFound) {
			t.Errorf("after delete: %v", err)
		}
		if err := ks.Delete(t.Context(), pk); !errors.Is(err, keystore.ErrNotFound) {
			t.Errorf("second delete: %v", err)
		}
	})
}

func TestOpen_insecureDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	if _, err := keystore.Open(dir, keystore.Options{}); !errors.Is(err, keystore.ErrInsecureFile) {
		t.Errorf("err = %v, want ErrInsecureFile", err)
	}
}
