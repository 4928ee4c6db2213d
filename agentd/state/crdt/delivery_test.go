package crdt

import (
	"cmp"
	"math/rand/v2"
	"slices"
)

// causalShuffle returns a uniformly random topological order of n ops given
// each op's dependencies (Kahn's algorithm picking a random ready op).
func causalShuffle(r *rand.Rand, ops []Op, deps [][]int) []int {
	n := len(deps)
	indeg := make([]int, n)
	succ := make([][]int, n)
	for i, ds := range deps {
		for _, d := range ds {
			indeg[i]++
			succ[d] = append(succ[d], i)
		}
	}
	var ready, order []int
	for i := range n {
		if indeg[i] == 0 {
			ready = append(ready, i)
		}
	}
	for len(ready) > 0 {
		j := r.IntN(len(ready))
		i := ready[j]
		ready[j] = ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		order = append(order, i)
		for _, s := range succ[i] {
			if indeg[s]--; indeg[s] == 0 {
				ready = append(ready, s)
			}
		}
	}
	if len(order) != n {
		panic("dependency cycle")
	}
	return order
}

// shuffled returns a random permutation of 0..n-1.
func shuffled(r *rand.Rand, n int) []int { return r.Perm(n) }

// withDuplicates adds k copies of random entries, each somewhere after its
// original (so a causal order stays causal).
func withDuplicates(r *rand.Rand, order []int, k int) []int {
	if len(order) == 0 {
		return order
	}
	type slot struct {
		at  float64
		idx int
	}
	slots := make([]slot, 0, len(order)+k)
	for p, idx := range order {
		slots = append(slots, slot{float64(p), idx})
	}
	for range k {
		p := r.IntN(len(order))
		slots = append(slots, slot{float64(p) + 0.5 + r.Float64()*float64(len(order)-p), order[p]})
	}
	slices.SortStableFunc(slots, func(a, b slot) int { return cmp.Compare(a.at, b.at) })
	out := make([]int, len(slots))
	for i, s := range slots {
		out[i] = s.idx
	}
	return out
}
