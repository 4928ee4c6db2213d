package crdt

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"
)

const (
	propSeeds = 200
	propSteps = 120
)

// TestProperty_Convergence: for every CRDT, random concurrent ops on three
// replicas, then every op delivered to each replica (and to fresh ones) in
// a different random order with duplicates: random causal orders (what
// rga requires) and uniformly random orders (every CRDT buffers what
// arrives early), and once more through JSON. All replicas must reach the
// value of a sequential replay of the log (and the oracle's, if any).
func TestProperty_Convergence(t *testing.T) {
	for _, m := range models() {
		t.Run(m.name, func(t *testing.T) {
			for seed := range uint64(propSeeds) {
				checkConvergence(t, m, seed)
			}
		})
	}
}

func checkConvergence(t *testing.T, m model, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 0xC0FFEE))
	log := generate(t, m, r, propSteps)
	ops := logOps(log)
	want := valueJSON(t, build(t, m, ops, inOrder(len(ops))))
	if m.oracle != nil {
		if got := jsonOf(t, m.oracle(ops)); got != want {
			t.Fatalf("seed %d: sequential replay %s, oracle %s", seed, want, got)
		}
	}
	for k := range 4 {
		causal := k%2 == 0
		c := build(t, m, ops, deliveryOrder(r, log, causal))
		if got := valueJSON(t, c); got != want {
			t.Fatalf("seed %d: delivery %d (causal=%v): got %s, want %s", seed, k, causal, got, want)
		}
	}
	rt := roundTrip(t, ops)
	if got := valueJSON(t, build(t, m, rt, deliveryOrder(r, log, false))); got != want {
		t.Fatalf("seed %d: JSON round-tripped ops: got %s, want %s", seed, got, want)
	}
}

// TestProperty_Idempotence: applying every op twice in a row equals once.
func TestProperty_Idempotence(t *testing.T) {
	for _, m := range models() {
		t.Run(m.name, func(t *testing.T) {
			for seed := range uint64(propSeeds / 2) {
				r := rand.New(rand.NewPCG(seed, 0xD0))
				ops := logOps(generate(t, m, r, propSteps))
				once := build(t, m, ops, inOrder(len(ops)))
				twice := m.new()
				for _, op := range ops {
					mustApply(t, twice, op, op)
				}
				if a, b := valueJSON(t, once), valueJSON(t, twice); a != b {
					t.Fatalf("seed %d: once %s, twice %s", seed, a, b)
				}
			}
		})
	}
}

// TestProperty_Merge: for every CRDT with a state merge, states built from
// random subsets of the ops merge commutatively, associatively and
// idempotently, to the state of the union of their ops, without changing
// the merged-in state.
func TestProperty_Merge(t *testing.T) {
	for _, m := range models() {
		if m.merge == nil {
			continue
		}
		t.Run(m.name, func(t *testing.T) {
			for seed := range uint64(propSeeds / 2) {
				checkMerge(t, m, seed)
			}
		})
	}
}

func checkMerge(t *testing.T, m model, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 0xE0))
	ops := logOps(generate(t, m, r, propSteps))
	var sub [3][]int
	for i := range ops {
		for s := range sub {
			if r.IntN(2) == 0 {
				sub[s] = append(sub[s], i)
			}
		}
	}
	state := func(s int) CRDT { return build(t, m, ops, sub[s]) }
	merged := func(dst, src CRDT) CRDT {
		before := valueJSON(t, src)
		if err := m.merge(dst, src); err != nil {
			t.Fatalf("seed %d: merge: %v", seed, err)
		}
		if after := valueJSON(t, src); after != before {
			t.Fatalf("seed %d: merge changed its argument: %s -> %s", seed, before, after)
		}
		return dst
	}
	ab, ba := valueJSON(t, merged(state(0), state(1))), valueJSON(t, merged(state(1), state(0)))
	if ab != ba {
		t.Fatalf("seed %d: not commutative: %s vs %s", seed, ab, ba)
	}
	left := valueJSON(t, merged(merged(state(0), state(1)), state(2)))
	right := valueJSON(t, merged(state(0), merged(state(1), state(2))))
	if left != right {
		t.Fatalf("seed %d: not associative: %s vs %s", seed, left, right)
	}
	if aa, a := valueJSON(t, merged(state(0), state(0))), valueJSON(t, state(0)); aa != a {
		t.Fatalf("seed %d: not idempotent: %s vs %s", seed, aa, a)
	}
	union := build(t, m, ops, unionSorted(sub[0], sub[1]))
	if u := valueJSON(t, union); u != ab {
		t.Fatalf("seed %d: merge %s, union of ops %s", seed, ab, u)
	}
}

func unionSorted(a, b []int) []int {
	seen := map[int]bool{}
	var out []int
	for _, x := range append(append([]int{}, a...), b...) {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	slices.Sort(out) // log order
	return out
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return string(b)
}
