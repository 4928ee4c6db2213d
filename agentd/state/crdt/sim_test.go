package crdt

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// A simulation: three replicas make random local edits and now and then
// sync a random prefix of the global op log, so ops are both concurrent and
// causally related. Each logged op records its causal past as a frontier:
// the last op of each replica that its maker had seen.

const replicas = 3

type model struct {
	name string
	new  func() CRDT
	edit func(r *rand.Rand, c CRDT) ([]Op, error)
	// merge folds src's state into dst; nil when the CRDT has no state merge.
	merge func(dst, src CRDT) error
	// oracle computes the expected Value from the whole op set; may be nil.
	oracle func(ops []Op) any
}

type event struct {
	op   Op
	rep  int
	deps []int // log indexes
}

type simReplica struct {
	c      CRDT
	cursor int           // log[:cursor] has been delivered
	seen   [replicas]int // last log index seen per replica, -1 = none
}

// skewed returns a wall clock that lags or leads a shared one, so HLCs see
// ties, drift and logical increments.
func skewed(shared *int64, skew int64) func() time.Time {
	return func() time.Time { return time.UnixMilli(*shared + skew) }
}

func generate(t *testing.T, m model, r *rand.Rand, steps int) []event {
	t.Helper()
	var shared int64 = 1_700_000_000_000
	var reps [replicas]*simReplica
	for i := range reps {
		c := m.new()
		c.Bind(NewHLC(ReplicaID(fmt.Sprintf("r%d", i)), skewed(&shared, int64(r.IntN(5)))))
		reps[i] = &simReplica{c: c, seen: [replicas]int{-1, -1, -1}}
	}
	var log []event
	for range steps {
		shared += int64(r.IntN(3))
		i := r.IntN(replicas)
		rp := reps[i]
		if r.IntN(3) == 0 && rp.cursor < len(log) {
			to := rp.cursor + 1 + r.IntN(len(log)-rp.cursor)
			for j := rp.cursor; j < to; j++ {
				mustApply(t, rp.c, log[j].op)
				rp.seen[log[j].rep] = max(rp.seen[log[j].rep], j)
			}
			rp.cursor = to
			continue
		}
		ops, err := m.edit(r, rp.c)
		if err != nil {
			t.Fatalf("edit: %v", err)
		}
		for _, op := range ops {
			var deps []int
			for _, s := range rp.seen {
				if s >= 0 {
					deps = append(deps, s)
				}
			}
			log = append(log, event{op: op, rep: i, deps: deps})
			rp.seen[i] = len(log) - 1
		}
	}
	return log
}

func logOps(log []event) []Op {
	ops := make([]Op, len(log))
	for i, e := range log {
		ops[i] = e.op
	}
	return ops
}

func logDeps(log []event) [][]int {
	deps := make([][]int, len(log))
	for i, e := range log {
		deps[i] = e.deps
	}
	return deps
}

// deliveryOrder is a random order of the log with duplicates: a random
// topological order of the happened-before DAG if causal, else uniformly
// random (every CRDT buffers ops that arrive before their dependencies).
func deliveryOrder(r *rand.Rand, log []event, causal bool) []int {
	var order []int
	if causal {
		order = causalShuffle(r, logOps(log), logDeps(log))
	} else {
		order = r.Perm(len(log))
	}
	return withDuplicates(r, order, len(order)/3+1)
}

// build returns a fresh replica with ops applied in the given order.
func build(t *testing.T, m model, ops []Op, order []int) CRDT {
	t.Helper()
	c := m.new()
	for _, i := range order {
		mustApply(t, c, ops[i])
	}
	return c
}

func valueJSON(t *testing.T, c CRDT) string {
	t.Helper()
	b, err := json.Marshal(c.Value())
	if err != nil {
		t.Fatalf("marshal value: %v", err)
	}
	return string(b)
}

func roundTrip(t *testing.T, ops []Op) []Op {
	t.Helper()
	b, err := json.Marshal(ops)
	if err != nil {
		t.Fatalf("marshal ops: %v", err)
	}
	var out []Op
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("unmarshal ops: %v", err)
	}
	return out
}

func inOrder(n int) []int {
	o := make([]int, n)
	for i := range o {
		o[i] = i
	}
	return o
}
