package crdt

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRGAText_FriendsForever replays the concurrent friendsforever trace
// (two authors typing at once, ~26k edits): each author has a replica;
// before a transaction its replica receives exactly the transactions in
// the closure of the transaction's parents (so positions, which are
// relative to the author's own version, are right), then makes the edits
// locally. Finally both replicas receive everything and must equal the
// trace's endContent.
func TestRGAText_FriendsForever(t *testing.T) {
	tr := loadTrace(t, "concurrent/friendsforever.json.gz")
	agents := 0
	for _, tx := range tr.Txns {
		agents = max(agents, tx.Agent+1)
	}
	reps := make([]*RGAText, agents)
	applied := make([][]bool, agents)
	for a := range reps {
		reps[a] = boundText(ReplicaID(fmt.Sprintf("agent%d", a)))
		applied[a] = make([]bool, len(tr.Txns))
	}
	txOps := make([][]Op, len(tr.Txns))
	catchUp := func(a int, heads []int) {
		for _, i := range missing(tr, applied[a], heads) {
			mustApply(t, reps[a], txOps[i]...)
			applied[a][i] = true
		}
	}
	for i, tx := range tr.Txns {
		a := tx.Agent
		catchUp(a, tx.Parents)
		for _, p := range tx.Patches {
			if p.Del > 0 {
				txOps[i] = append(txOps[i], reps[a].Delete(p.Pos, p.Del)...)
			}
			if p.Ins != "" {
				txOps[i] = append(txOps[i], reps[a].Insert(p.Pos, p.Ins)...)
			}
		}
		applied[a][i] = true
	}
	all := make([]int, len(tr.Txns))
	for i := range all {
		all[i] = i
	}
	for a, r := range reps {
		catchUp(a, all)
		if got := r.String(); got != tr.EndContent {
			t.Fatalf("agent %d: %d runes, want endContent (%d runes)", a, r.Len(), len([]rune(tr.EndContent)))
		}
		if err := r.check(); err != nil {
			t.Fatal(err)
		}
	}
	// A third replica gets every op at once, in random order, twice over.
	var ops []Op
	for _, o := range txOps {
		ops = append(ops, o...)
	}
	rnd := rand.New(rand.NewPCG(3, 3))
	c := NewRGAText()
	for _, i := range withDuplicates(rnd, rnd.Perm(len(ops)), len(ops)) {
		mustApply(t, c, ops[i])
	}
	if c.String() != tr.EndContent || c.Pending() != 0 {
		t.Fatalf("random-order replica differs from endContent (pending %d)", c.Pending())
	}
}

// missing returns, in index order (a causal order), the transactions in the
// closure of heads that are not applied yet.
func missing(tr *trace, applied []bool, heads []int) []int {
	seen := map[int]bool{}
	stack := slices.Clone(heads)
	var out []int
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if applied[i] || seen[i] {
			continue
		}
		seen[i] = true
		out = append(out, i)
		stack = append(stack, tr.Txns[i].Parents...)
	}
	slices.Sort(out)
	return out
}
