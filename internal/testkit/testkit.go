package testkit

import (
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// Key is a keypair (hex).
type Key struct{ SK, PK string }

// NewKey is a fresh random keypair.
func NewKey(t testing.TB) Key {
	t.Helper()
	sk := nostr.GeneratePrivateKey()
	pk, err := nostr.GetPublicKey(sk)
	if err != nil {
		t.Fatal(err)
	}
	return Key{SK: sk, PK: pk}
}

// MaxPoll is the longest pause between two checks of WaitFor's condition
// (the pause starts at a millisecond and doubles: quick conditions are
// seen at once, costly ones are not asked a thousand times a second).
const MaxPoll = 20 * time.Millisecond

// WaitFor checks cond until it holds; after within, it fails the test
// naming what it waited for.
func WaitFor(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	pause := time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(pause) // polling: used where nothing can be awaited
		pause = min(2*pause, MaxPoll)
	}
}
