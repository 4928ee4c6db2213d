package crdt

import (
	"math/rand/v2"
	"testing"
)

// TestRGAText_ConvergenceLong runs the convergence property with long
// histories, so the trees split leaves and inner nodes and coalesce
// tombstones while ops arrive concurrently, out of order and twice; the
// tree invariants are checked on every replica.
func TestRGAText_ConvergenceLong(t *testing.T) {
	m := models()[6]
	if m.name != TypeRGAText {
		t.Fatalf("model 6 is %s", m.name)
	}
	for seed := range uint64(4) {
		r := rand.New(rand.NewPCG(seed, 0x10))
		log := generate(t, m, r, 6000)
		ops := logOps(log)
		ref := build(t, m, ops, inOrder(len(ops))).(*RGAText)
		spans, height := ref.stats()
		if height < 3 {
			t.Fatalf("seed %d: tree height %d (%d spans): too small to test splits", seed, height, spans)
		}
		for k := range 3 {
			c := build(t, m, ops, deliveryOrder(r, log, k == 0)).(*RGAText)
			if c.String() != ref.String() || c.Pending() != 0 {
				t.Fatalf("seed %d delivery %d: diverged (pending %d)", seed, k, c.Pending())
			}
			if err := c.check(); err != nil {
				t.Fatalf("seed %d delivery %d: %v", seed, k, err)
			}
		}
	}
}
