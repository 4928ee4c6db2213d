package testkit_test

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/testkit"
)

func TestNewKey(t *testing.T) {
	k := testkit.NewKey(t)
	if pk, err := nostr.GetPublicKey(k.SK); err != nil || pk != k.PK {
		t.Fatalf("NewKey = %+v: the pubkey of SK is %s (%v)", k, pk, err)
	}
	if testkit.NewKey(t) == k {
		t.Error("two NewKey calls gave the same key")
	}
}

func TestWaitFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		testkit.WaitFor(t, time.Second, "100 ms", func() bool { return time.Since(start) >= 100*time.Millisecond })
		if took := time.Since(start); took < 100*time.Millisecond || took > 100*time.Millisecond+testkit.MaxPoll {
			t.Errorf("WaitFor returned after %v, want 100 ms (+ at most MaxPoll)", took)
		}
	})
}

func TestClock(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := testkit.NewClock(start)
	if got := clk.Now(); !got.Equal(start) {
		t.Fatalf("Now = %v, want %v", got, start)
	}
	clk.Advance(time.Minute)
	if got, want := clk.Now(), start.Add(time.Minute); !got.Equal(want) {
		t.Errorf("after Advance: %v, want %v", got, want)
	}
	clk.Set(start)
	if got := clk.Now(); !got.Equal(start) {
		t.Errorf("after Set: %v, want %v", got, start)
	}
}

func TestParallel_callsEveryIndexOnce(t *testing.T) {
	var mu sync.Mutex
	seen := map[int]int{}
	testkit.Parallel(t, 100, 7, func(i int) error {
		mu.Lock()
		defer mu.Unlock()
		seen[i]++
		return nil
	})
	for i := range 100 {
		if seen[i] != 1 {
			t.Fatalf("index %d called %d times, want once", i, seen[i])
		}
	}
	if len(seen) != 100 {
		t.Fatalf("%d indexes called, want 100", len(seen))
	}
}
