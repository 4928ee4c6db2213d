package memguard

import (
	"sync/atomic"
	"testing"
	"time"
)

// Busy turns on at ShedFraction of the ceiling, stays on until the figure
// falls below ResumeFraction, and reads the figure at most once per
// SampleInterval.
func TestGuard_Busy(t *testing.T) {
	var used, reads atomic.Int64
	clock := time.Unix(0, 0)
	var collections int
	g := NewWith(1000, func() int64 { reads.Add(1); return used.Load() }, func() time.Time { return clock }, func() { collections++ })
	step := func(u int64) bool {
		used.Store(u)
		clock = clock.Add(SampleInterval)
		return g.Busy()
	}
	for _, c := range []struct {
		used int64
		want bool
	}{{100, false}, {799, false}, {800, true}, {750, true}, {700, true}, {699, false}, {900, true}} {
		if got := step(c.used); got != c.want {
			t.Fatalf("in use %d: Busy() = %v, want %v", c.used, got, c.want)
		}
	}
	if collections == 0 || collections > 5 {
		t.Fatalf("%d collections forced over 0.7 s above the resume threshold, want 1 per %s", collections, CollectInterval)
	}
	before := reads.Load()
	used.Store(0)
	for range 100 {
		g.Busy() // same instant: no new sample
	}
	if got := reads.Load(); got != before {
		t.Fatalf("read the figure %d times within one interval", got-before)
	}
}

// A guard without a ceiling is nil and never busy.
func TestGuard_nilNeverBusy(t *testing.T) {
	g := New(0)
	if g != nil || g.Busy() || g.Ceiling() != 0 {
		t.Fatal("a guard without a ceiling must be nil and never busy")
	}
}

// The runtime figure and the machine's memory are read.
func TestRuntimeInUseAndDefaultCeiling(t *testing.T) {
	if RuntimeInUse() <= 0 {
		t.Fatal("RuntimeInUse() is not positive")
	}
	if c := DefaultCeiling(); c <= 0 || c > MachineMemory() {
		t.Fatalf("DefaultCeiling() = %d, machine %d", c, MachineMemory())
	}
}
