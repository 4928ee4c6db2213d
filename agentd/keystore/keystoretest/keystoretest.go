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
	"context"
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
	t.Run("Cancelled", func(t *testing.T) { cancelled(t, fresh(t)) })
}

// cancelled: a call whose ctx has ended fails with the ctx's error and
// changes nothing (a cancelled request cancels its queries).
func cancelled(t *testing.T, open Open) {
	ks := open(keystore.Options{})
	pk, err := ks.Create(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := ks.Create(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Create on a cancelled ctx: %v, want context.Canceled", err)
	}
	if _, err := ks.List(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("List on a cancelled ctx: %v, want context.Canceled", err)
	}
	if _, err := open(keystore.Options{}).Secret(ctx, pk); !errors.Is(err, context.Canceled) {
		t.Errorf("Secret (not cached) on a cancelled ctx: %v, want context.Canceled", err)
	}
	if err := ks.Delete(ctx, pk); !errors.Is(err, context.Canceled) {
		t.Errorf("Delete on a cancelled ctx: %v, want context.Canceled", err)
	}
	if list, err := ks.List(t.Context()); err != nil || !slices.Equal(list, []string{pk}) {
		t.Errorf("after the cancelled calls: List = %v, %v; want only [%s]", list, err, pk)
	}
}

func createSecretSign(t *testing.T, open Open) {
	pk, err := open(keystore.Options{}).Create(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	other := open(keystore.Options{})
	sk, err := other.Secret(t.Context(), pk)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := nostr.GetPublicKey(sk); got != pk {
		t.Fatalf("secret belongs to %s, want %s", got, pk)
	}
	evt := nostr.Event{Kind: 1, CreatedAt: nostr.Now(), Content: "hi"}
	if err := other.Sign(t.Context(), pk, &evt); err != nil {
		t.Fatal(err)
	}
	if ok, _ := evt.CheckSignature(); !ok || evt.PubKey != pk {
		t.Errorf("signed event: pubkey %s, signature ok %v", evt.PubKey, ok)
	}
	if enc, err := other.Encrypted(t.Context(), pk); err != nil || enc {
		t.Errorf("Encrypted = %v, %v; want false", enc, err)
	}
	if list, err := other.List(t.Context()); err != nil || !slices.Equal(list, []string{pk}) {
		t.Errorf("List = %v, %v; want [%s]", list, err, pk)
	}
}

func encrypted(t *testing.T, open Open) {
	ks := open(keystore.Options{Passphrase: "pw", LogN: logN})
	if !ks.Encrypts() {
		t.Error("Encrypts() = false with a passphrase")
	}
	pk, err := ks.Create(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if enc, err := open(keystore.Options{}).Encrypted(t.Context(), pk); err != nil || !enc {
		t.Errorf("Encrypted = %v, %v; want true", enc, err)
	}
	if _, err := open(keystore.Options{}).Secret(t.Context(), pk); !errors.Is(err, keystore.ErrPassphraseRequired) {
		t.Errorf("no passphrase: %v, want ErrPassphraseRequired", err)
	}
	if _, err := open(keystore.Options{Passphrase: "nope"}).Secret(t.Context(), pk); !errors.Is(err, keystore.ErrWrongPassphrase) {
		t.Errorf("wrong passphrase: %v, want ErrWrongPassphrase", err)
	}
	sk, err := open(keystore.Options{Passphrase: "pw"}).Secret(t.Context(), pk)
	if got, _ := nostr.GetPublicKey(sk); err != nil || got != pk {
		t.Errorf("right passphrase: %s, %v", got, err)
	}
}

func deleteKey(t *testing.T, open Open) {
	ks := open(keystore.Options{})
	pk, err := ks.Create(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := ks.Delete(t.Context(), pk); err != nil {
		t.Fatal(err)
	}
	if _, err := open(keystore.Options{}).Secret(t.Context(), pk); !errors.Is(err, keystore.ErrNotFound) {
		t.Errorf("Secret after Delete: %v, want ErrNotFound", err)
	}
	if err := ks.Delete(t.Context(), pk); !errors.Is(err, keystore.ErrNotFound) {
		t.Errorf("second Delete: %v, want ErrNotFound", err)
	}
	if list, _ := ks.List(t.Context()); len(list) != 0 {
		t.Errorf("List after Delete = %v", list)
	}
}

func badPubKey(t *testing.T, open Open) {
	ks := open(keystore.Options{})
	if _, err := ks.Secret(t.Context(), "NOT-HEX"); !errors.Is(err, keystore.ErrBadPubKey) {
		t.Errorf("Secret(bad): %v, want ErrBadPubKey", err)
	}
	if err := ks.Delete(t.Context(), "NOT-HEX"); !errors.Is(err, keystore.ErrBadPubKey) {
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
			if pks[i], err = ks.Create(t.Context()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	slices.Sort(pks)
	if list, err := open(keystore.Options{}).List(t.Context()); err != nil || !slices.Equal(list, pks) {
		t.Errorf("List = %v, %v; want %v", list, err, pks)
	}
}
