package state

// hunk is one contiguous change of a sequence: del units removed at pos
// (in the old sequence) and the new sequence's units [from, from+n)
// inserted there (a hunk's insertions are contiguous in the new sequence).
type hunk struct {
	pos, del int
	from, n  int
}

// inserted returns h's inserted units of the new sequence b.
func inserted[T any](h hunk, b []T) []T { return b[h.from : h.from+h.n] }

// Myers diff bounds: at most maxEdits edit steps, and at most maxWork
// (len(a)+len(b))*d comparisons; past either, the changed middle becomes
// one hunk (still correct, just coarser).
const (
	maxEdits = 1000
	maxWork  = 50_000_000
)

// diffSeq returns the hunks that turn a into b, minimal (Myers) within the
// bounds above, after trimming the common prefix and suffix.
func diffSeq[T comparable](a, b []T) []hunk {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if len(ma) == 0 && len(mb) == 0 {
		return nil
	}
	hs := myers(ma, mb)
	for i := range hs {
		hs[i].pos += pre
		hs[i].from += pre
	}
	return hs
}

// myers runs Myers' O((N+M)D) algorithm and groups its edits into hunks;
// it falls back to one hunk when the bounds are exceeded.
func myers[T comparable](a, b []T) []hunk {
	limit := min(maxEdits, len(a)+len(b))
	if w := maxWork / max(1, len(a)+len(b)); w < limit {
		limit = w
	}
	trace, ok := myersTrace(a, b, limit)
	if !ok {
		return []hunk{wholeHunk(len(a), len(b))}
	}
	return group(backtrack(trace, len(a), len(b)))
}

func wholeHunk(n, m int) hunk { return hunk{pos: 0, del: n, from: 0, n: m} }

// myersTrace returns the furthest-reaching x per diagonal for each d, or
// false if more than limit edits are needed.
func myersTrace[T comparable](a, b []T, limit int) ([][]int, bool) {
	n, m := len(a), len(b)
	var trace [][]int
	for d := 0; d <= limit; d++ {
		v := make([]int, 2*d+1)
		for k := -d; k <= d; k += 2 {
			x := startX(trace, d, k)
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[k+d] = x
			if x >= n && y >= m {
				return append(trace, v), true
			}
		}
		trace = append(trace, v)
	}
	return nil, false
}

// startX is where diagonal k starts at step d: from k+1 (a step down, an
// insertion) or k-1 (a step right, a deletion) of step d-1.
func startX(trace [][]int, d, k int) int {
	if d == 0 {
		return 0
	}
	prev := trace[d-1]
	at := func(k int) int { return prev[k+d-1] }
	if k == -d || k != d && at(k-1) < at(k+1) {
		return at(k + 1)
	}
	return at(k-1) + 1
}

// edit is one elementary change: delete a[ai], or insert b[bj] before a[ai].
type editStep struct {
	ins    bool
	ai, bj int
}

// backtrack walks the trace from (n, m) back to (0, 0), returning the
// edits in forward order.
func backtrack(trace [][]int, n, m int) []editStep {
	var out []editStep
	x, y := n, m
	for d := len(trace) - 1; d > 0; d-- {
		prev := trace[d-1]
		at := func(k int) int { return prev[k+d-1] }
		k := x - y
		var pk int
		if k == -d || k != d && at(k-1) < at(k+1) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := at(pk)
		py := px - pk
		if pk == k+1 {
			out = append(out, editStep{ins: true, ai: px, bj: py})
		} else {
			out = append(out, editStep{ai: px})
		}
		x, y = px, py
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// group merges adjacent edits into hunks.
func group(edits []editStep) []hunk {
	var out []hunk
	for _, e := range edits {
		if n := len(out); n > 0 && e.ai == out[n-1].pos+out[n-1].del {
			h := &out[n-1]
			if e.ins {
				if h.n == 0 {
					h.from = e.bj
				}
				h.n++
			} else {
				h.del++
			}
			continue
		}
		h := hunk{pos: e.ai}
		if e.ins {
			h.from, h.n = e.bj, 1
		} else {
			h.del = 1
		}
		out = append(out, h)
	}
	return out
}
