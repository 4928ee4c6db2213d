package crdt

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// TestRGAText_AutomergePaper replays the automerge-paper trace (259,778
// single-character edits) as local edits and checks endContent, then ships
// the ops to a second replica in a random causal order.
func TestRGAText_AutomergePaper(t *testing.T) {
	tr := loadTrace(t, "automerge-paper.json.gz")
	a := boundText("alice")
	a.Insert(0, tr.StartContent)
	ops := replay(a, tr.patches(), true)
	if got := a.String(); got != tr.EndContent {
		t.Fatalf("replay: got %d runes, want %d; texts differ", len([]rune(got)), len([]rune(tr.EndContent)))
	}
	if err := a.check(); err != nil {
		t.Fatal(err)
	}
	spans, height := a.stats()
	t.Logf("replica A: %d ops, %d spans, tree height %d", len(ops), spans, height)

	order := causalShuffle(rand.New(rand.NewPCG(7, 7)), ops, rgaDeps(ops))
	b := boundText("bob")
	for _, i := range order {
		mustApply(t, b, ops[i])
	}
	if got := b.String(); got != tr.EndContent {
		t.Fatalf("replica B after shuffled causal delivery differs from endContent")
	}
	if b.Pending() != 0 {
		t.Fatalf("replica B has %d buffered ops", b.Pending())
	}
	if err := b.check(); err != nil {
		t.Fatal(err)
	}
	spans, height = b.stats()
	t.Logf("replica B: %d spans, tree height %d", spans, height)
}

// TestRGAText_AutomergePaperAnyOrder ships the trace's ops in a uniformly
// random order (ignoring causality) with duplicates: early ops are buffered
// until their dependencies arrive, and nothing is lost.
func TestRGAText_AutomergePaperAnyOrder(t *testing.T) {
	tr := loadTrace(t, "automerge-paper.json.gz")
	a := boundText("alice")
	ops := replay(a, tr.patches(), true)
	r := rand.New(rand.NewPCG(9, 9))
	deliver := withDuplicates(r, shuffled(r, len(ops)), len(ops)/10)
	b := NewRGAText()
	for _, i := range deliver {
		mustApply(t, b, ops[i])
	}
	if b.String() != tr.EndContent || b.Pending() != 0 {
		t.Fatalf("random-order delivery: text differs or %d ops still buffered", b.Pending())
	}
	if err := b.check(); err != nil {
		t.Fatal(err)
	}
}

// rgaDeps returns, for each op, the indexes of the ops it causally needs:
// the op that inserted an insert's origin, the ops that inserted a
// delete's targets.
func rgaDeps(ops []Op) [][]int {
	type run struct {
		id  OpID
		n   uint64
		idx int
	}
	var runs []run
	for i, op := range ops {
		if op.Kind == OpInsert {
			runs = append(runs, run{op.ID, uint64(len([]rune(op.Text))), i})
		}
	}
	// Ops of one replica have increasing counters; sort to be safe.
	slices.SortFunc(runs, func(a, b run) int { return a.id.Compare(b.id) })
	owner := func(u OpID) int { // index of the run holding unit u
		j := sort.Search(len(runs), func(j int) bool {
			return runs[j].id.Counter > u.Counter
		}) - 1
		for ; j >= 0; j-- {
			if r := runs[j]; r.id.Replica == u.Replica && u.Counter < r.id.Counter+r.n {
				return j
			}
		}
		panic("unit without an insert: " + u.String())
	}
	deps := make([][]int, len(ops))
	for i, op := range ops {
		switch {
		case op.Kind == OpInsert && !op.Ref.IsZero():
			deps[i] = []int{runs[owner(op.Ref)].idx}
		case op.Kind == OpDelete:
			for c := op.Ref.Counter; c < op.Ref.Counter+uint64(op.Len); {
				j := owner(OpID{op.Ref.Replica, c})
				deps[i] = append(deps[i], runs[j].idx)
				c = runs[j].id.Counter + runs[j].n
			}
		}
	}
	return deps
}
