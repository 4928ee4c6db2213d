// Package keystoretest is the conformance suite of keystore.Keys: every
// backend (the key directory, agentd/agentpg) runs it from its own tests.
//
//	func TestKeys_conformance(t *testing.T) {
//		keystoretest.Run(t, func(t *testing.T) keystoretest.Open {
//			dir := t.TempDir()
//			return func(o keystore.Options) keystore.Keys { ks, _ := keystore.Open(dir, o); return ks }
//		})
//	}
package keystoretest

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/keystore"
)

// Open returns a new handle (a restart, another instance) on one backing.
type Open func(o keystore.Options) keystore.Keys

// Fresh makes an empty backing and returns how to open handles on it.
type Fresh func(t *testing.T) Open

// logN keeps NIP-49 cheap in tests.
const logN = 4

// Run runs the suite.
func Run(t *testing.T, fresh Fresh) {
	t.Run("CreateSecretSign", func(t *testing.T) { createSecretSign(t, fresh(t)) })
	t.Run("Encrypted", func(t *testing.T) { encrypted(t, fresh(t)) })
	t.Run("Delete", func(t *testing.T) { deleteKey(t, fresh(t)) })
	t.Run("BadPubKey", func(t *testing.T) { badPubKey(t, fresh(t)) })
	t.Run("ConcurrentCreate", func(t *testing.T) { concurrentCreate(t, fresh(t)) })
}

func createSecretSign(t *testing.T, open Open) {
	pk, err := open(keystore.Options{}).Create()
	if err != nil {
		t.Fatal(err)
	}
	other := open(keystore.Options{})
	sk, err := other.Secret(pk)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := nostr.GetPublicKey(sk); got != pk {
		t.Fatalf("secret belongs to %s, want %s", got, pk)
	}
	evt := nostr.Event{Kind: 1, CreatedAt: nostr.Now(), Content: "hi"}
	if err := other.Sign(pk, &evt); err != nil {
		t.Fatal(err)
	}
	if ok, _ := evt.CheckSignature(); !ok || evt.PubKey != pk {
		t.Errorf("signed event: pubkey %s, signature ok %v", evt.PubKey, ok)
	}
	if enc, err := other.Encrypted(pk); err != nil || enc {
		t.Errorf("Encrypted = %v, %v; want false", enc, err)
	}
	if list, err := other.List(); err != nil || !slices.Equal(list, []string{pk}) {
		t.Errorf("List = %v, %v; want [%s]", list, err, pk)
	}
}

func encrypted(t *testing.T, open Open) {
	ks := open(keystore.Options{Passphrase: "pw", LogN: logN})
	if !ks.Encrypts() {
		t.Error("Encrypts() = false with a passphrase")
	}
	pk, err := ks.Create()
	if err != nil {
		t.Fatal(err)
	}
	if enc, err := open(keystore.Options{}).Encrypted(pk); err != nil || !enc {
		t.Errorf("Encrypted = %v, %v; want true", enc, err)
	}
	if _, err := open(keystore.Options{}).Secret(pk); !errors.Is(err, keystore.ErrPassphraseRequired) {
		t.Errorf("no passphrase: %v, want ErrPassphraseRequired", err)
	}
	if _, err := open(keystore.Options{Passphrase: "nope"}).Secret(pk); !errors.Is(err, keystore.ErrWrongPassphrase) {
		t.Errorf("wrong passphrase: %v, want ErrWrongPassphrase", err)
	}
	sk, err := open(keystore.Options{Passphrase: "pw"}).Secret(pk)
	if got, _ := nostr.GetPublicKey(sk); err != nil || got != pk {
		t.Errorf("right passphrase: %s, %v", got, err)
	}
}

func deleteKey(t *testing.T, open Open) {
	ks := open(keystore.Options{})
	pk, err := ks.Create()
	if err != nil {
		t.Fatal(err)
	}
	if err := ks.Delete(pk); err != nil {
		t.Fatal(err)
	}
	if _, err := open(keystore.Options{}).Secret(pk); !errors.Is(err, keystore.ErrNotFound) {
		t.Errorf("Secret after Delete: %v, want ErrNotFound", err)
	}
	if err := ks.Delete(pk); !errors.Is(err, keystore.ErrNotFound) {
		t.Errorf("second Delete: %v, want ErrNotFound", err)
	}
	if list, _ := ks.List(); len(list) != 0 {
		t.Errorf("List after Delete = %v", list)
	}
}

func badPubKey(t *testing.T, open Open) {
	ks := open(keystore.Options{})
	if _, err := ks.Secret("NOT-HEX"); !errors.Is(err, keystore.ErrBadPubKey) {
		t.Errorf("Secret(bad): %v, want ErrBadPubKey", err)
	}
	if err := ks.Delete("NOT-HEX"); !errors.Is(err, keystore.ErrBadPubKey) {
		t.Errorf("Delete(bad): %v, want ErrBadPubKey", err)
	}
}

func concurrentCreate(t *testing.T, open Open) {
	a, b := open(keystore.Options{}), open(keystore.Options{})
	var wg sync.WaitGroup
	pks := make([]string, 8)
	for i := range pks {
		ks := a
		if i%2 == 1 {
			ks = b
		}
		wg.Go(func() {
			var err error
			if pks[i], err = ks.Create(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	slices.Sort(pks)
	if list, err := open(keystore.Options{}).List(); err != nil || !slices.Equal(list, pks) {
		t.Errorf("List = %v, %v; want %v", list, err, pks)
	}
}
