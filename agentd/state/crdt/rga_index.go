package crdt

import "slices"

// idIndex maps one replica's unit counters to the tree leaf holding them: a
// sorted list of span starts, cut into chunks so an insert in the middle
// moves at most one chunk. Lookup is two binary searches; typing appends.
type idIndex struct {
	chunks [][]idEntry
}

// idEntry holds no pointer (leaves are numbered, see rga.leaves), so the
// index costs the garbage collector nothing and moves need no write barriers.
type idEntry struct {
	seq  uint64 // first counter of a span
	leaf uint32
}

const idChunkMax = 256

// search returns the position of the last entry with seq <= s, or ok=false.
func (x *idIndex) search(s uint64) (c, i int, ok bool) {
	lo, hi := 0, len(x.chunks) // first chunk starting after s
	for lo < hi {
		if m := int(uint(lo+hi) >> 1); x.chunks[m][0].seq > s {
			hi = m
		} else {
			lo = m + 1
		}
	}
	if c = lo - 1; c < 0 {
		return 0, 0, false
	}
	ch := x.chunks[c]
	lo, hi = 0, len(ch) // first entry after s
	for lo < hi {
		if m := int(uint(lo+hi) >> 1); ch[m].seq > s {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return c, lo - 1, true
}

// find returns the leaf number of the span starting at or before s.
func (x *idIndex) find(s uint64) (uint32, bool) {
	c, i, ok := x.search(s)
	if !ok {
		return 0, false
	}
	return x.chunks[c][i].leaf, true
}

// next returns the smallest span start greater than s.
func (x *idIndex) next(s uint64) (uint64, bool) {
	if len(x.chunks) == 0 {
		return 0, false
	}
	c, i, ok := x.search(s)
	if !ok {
		c, i = 0, -1
	}
	if i+1 < len(x.chunks[c]) {
		return x.chunks[c][i+1].seq, true
	}
	if c+1 < len(x.chunks) {
		return x.chunks[c+1][0].seq, true
	}
	return 0, false
}

// insert adds a span start s (not present) held by leaf.
func (x *idIndex) insert(s uint64, leaf uint32) {
	e := idEntry{seq: s, leaf: leaf}
	if n := len(x.chunks); n == 0 || x.last().seq < s {
		x.append(e)
		return
	}
	c, i, ok := x.search(s)
	if !ok {
		c, i = 0, -1
	}
	x.chunks[c] = slices.Insert(x.chunks[c], i+1, e)
	if len(x.chunks[c]) > idChunkMax {
		x.split(c)
	}
}

func (x *idIndex) last() idEntry {
	ch := x.chunks[len(x.chunks)-1]
	return ch[len(ch)-1]
}

func (x *idIndex) append(e idEntry) {
	n := len(x.chunks)
	if n == 0 || len(x.chunks[n-1]) >= idChunkMax {
		x.chunks = append(x.chunks, make([]idEntry, 0, idChunkMax/2))
		n++
	}
	x.chunks[n-1] = append(x.chunks[n-1], e)
}

// split halves chunk c.
func (x *idIndex) split(c int) {
	ch := x.chunks[c]
	h := len(ch) / 2
	right := append(make([]idEntry, 0, idChunkMax+1), ch[h:]...)
	clear(ch[h:])
	x.chunks[c] = ch[:h]
	x.chunks = slices.Insert(x.chunks, c+1, right)
}

// set repoints the span starting at s to leaf.
func (x *idIndex) set(s uint64, leaf uint32) {
	if c, i, ok := x.search(s); ok && x.chunks[c][i].seq == s {
		x.chunks[c][i].leaf = leaf
	}
}

// remove drops the span start s.
func (x *idIndex) remove(s uint64) {
	c, i, ok := x.search(s)
	if !ok || x.chunks[c][i].seq != s {
		return
	}
	x.chunks[c] = slices.Delete(x.chunks[c], i, i+1)
	if len(x.chunks[c]) == 0 {
		x.chunks = slices.Delete(x.chunks, c, c+1)
	}
}
