package crdt

import "slices"

// The sequence is a B+tree of spans. Leaves hold up to leafMax spans in
// document order and are chained left to right; inner nodes hold up to
// innerMax children. Every node knows how many visible units its subtree
// holds, which is what position lookup descends by.
const (
	leafMax  = 64
	innerMax = 32
)

type node struct {
	parent *node
	id     uint32  // leaves: index in rga.leaves
	vis    int     // visible units in the subtree
	kids   []*node // inner nodes only
	spans  []span  // leaves only
	next   *node   // leaves: right neighbour
}

// span is a run of units inserted by one replica with consecutive counters,
// each unit's origin being the unit before it. It holds no pointers, so
// leaves cost the garbage collector nothing to scan.
type span struct {
	seq    uint64 // counter of the first unit
	orgSeq uint64 // counter of the first unit's origin; 0 = document start
	off    uint32 // content bytes in the arena
	blen   uint32
	n      uint32 // units
	rep    uint32 // interned replica
	orgRep uint32
	del    bool
}

func (s *span) visible() int {
	if s.del {
		return 0
	}
	return int(s.n)
}

// newLeaf makes a leaf and numbers it for the id index.
func (d *rga) newLeaf(parent *node) *node {
	n := &node{parent: parent, id: uint32(len(d.leaves)), spans: make([]span, 0, leafMax+1)}
	d.leaves = append(d.leaves, n)
	return n
}

// addVis adds d visible units to n and its ancestors.
func addVis(n *node, d int) {
	for ; n != nil; n = n.parent {
		n.vis += d
	}
}

// findVisible returns the span holding visible unit p (0 <= p < root.vis)
// and p's offset in it.
func (d *rga) findVisible(p int) (*node, int, uint32) {
	n := d.root
	for n.kids != nil {
		for _, k := range n.kids {
			if p < k.vis {
				n = k
				break
			}
			p -= k.vis
		}
	}
	for i := range n.spans {
		s := &n.spans[i]
		if !s.del {
			if p < int(s.n) {
				return n, i, uint32(p)
			}
			p -= int(s.n)
		}
	}
	panic("crdt: rga position index out of sync")
}

// place inserts sp at index i of leaf (visible counts are the caller's
// business) and indexes it when fresh. It returns where sp ended up.
func (d *rga) place(leaf *node, i int, sp span) (*node, int) {
	d.ids[sp.rep].insert(sp.seq, leaf.id)
	leaf.spans = slices.Insert(leaf.spans, i, sp)
	if len(leaf.spans) <= leafMax {
		return leaf, i
	}
	right, h := d.splitLeaf(leaf)
	if i >= h {
		return right, i - h
	}
	return leaf, i
}

// splitLeaf moves the upper half of leaf's spans to a new right sibling.
func (d *rga) splitLeaf(leaf *node) (*node, int) {
	h := len(leaf.spans) / 2
	right := d.newLeaf(leaf.parent)
	right.spans = append(right.spans, leaf.spans[h:]...)
	leaf.spans = leaf.spans[:h]
	for i := range right.spans {
		s := &right.spans[i]
		right.vis += s.visible()
		d.ids[s.rep].set(s.seq, right.id)
	}
	leaf.vis -= right.vis
	right.next, leaf.next = leaf.next, right
	d.adopt(leaf, right)
	return right, h
}

// adopt inserts the new node right after left under left's parent,
// splitting upwards as needed.
func (d *rga) adopt(left, right *node) {
	p := left.parent
	if p == nil {
		p = &node{vis: left.vis + right.vis, kids: []*node{left, right}}
		left.parent, right.parent, d.root = p, p, p
		return
	}
	i := slices.Index(p.kids, left)
	p.kids = slices.Insert(p.kids, i+1, right)
	right.parent = p
	if len(p.kids) > innerMax {
		d.splitInner(p)
	}
}

func (d *rga) splitInner(n *node) {
	h := len(n.kids) / 2
	right := &node{parent: n.parent, kids: slices.Clone(n.kids[h:])}
	clear(n.kids[h:])
	n.kids = n.kids[:h]
	for _, k := range right.kids {
		k.parent = right
		right.vis += k.vis
	}
	n.vis -= right.vis
	d.adopt(n, right)
}

// splitSpan cuts the span at (leaf, i) before unit k (0 < k < n) and returns
// the locations of the left and right parts.
func (d *rga) splitSpan(leaf *node, i int, k uint32) (*node, int, *node, int) {
	s := &leaf.spans[i]
	right := *s
	bo := unitOffset(d.list, d.arena[s.off:s.off+s.blen], k, s.n)
	right.seq += uint64(k)
	right.n -= k
	right.off += bo
	right.blen -= bo
	right.orgSeq, right.orgRep = s.seq+uint64(k)-1, s.rep
	s.n, s.blen = k, bo
	rl, ri := d.place(leaf, i+1, right)
	if ri > 0 {
		return rl, ri - 1, rl, ri
	}
	return leaf, i, rl, ri
}
