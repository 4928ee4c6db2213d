package crdt

import "slices"

// rga is the sequence CRDT behind rga_text and rga_list: a Replicated
// Growable Array (Roh et al. 2011) whose elements ("units": runes, or JSON
// values) are stored as run-length spans in a B+tree indexed by visible
// length (rga_tree.go), with a per-replica id index (rga_index.go).
//
// Every unit has an id (replica, counter) and an origin: the unit it was
// inserted after (or the document start). Units after the same origin are
// ordered by id, greatest first; since counters are Lamport counters, a
// unit's descendants all have greater ids than it, which lets integration
// find the place by scanning right from the origin past greater ids.
type rga struct {
	base
	list    bool   // units are '\n'-terminated JSON values, not runes
	arena   []byte // unit content, append-only
	root    *node
	first   *node   // leftmost leaf (never changes: splits add right siblings)
	leaves  []*node // by leaf number
	reps    []ReplicaID
	repIdx  map[ReplicaID]uint32
	ids     []idIndex // by interned replica
	pending map[unitID][]pendingOp
	queue   []pendingOp // released ops waiting to be applied
}

// unitID is a unit id with an interned replica; seq 0 = document start.
type unitID struct {
	rep uint32
	seq uint64
}

// pendingOp is an op waiting for a unit it depends on.
type pendingOp struct {
	del     bool
	dead    bool   // insert of units already deleted (state merge): no content
	at      unitID // insert: first new unit; delete: first target
	org     unitID // insert: origin
	content string // insert: units' encoded content
	n       uint64 // units
}

func newRGA(list bool) rga {
	d := rga{list: list, repIdx: map[ReplicaID]uint32{}, pending: map[unitID][]pendingOp{}}
	d.root = d.newLeaf(nil)
	d.first = d.root
	return d
}

// intern returns the small index standing for replica r.
func (d *rga) intern(r ReplicaID) uint32 {
	if i, ok := d.repIdx[r]; ok {
		return i
	}
	i := uint32(len(d.reps))
	d.reps = append(d.reps, r)
	d.ids = append(d.ids, idIndex{})
	d.repIdx[r] = i
	return i
}

func (d *rga) unit(id OpID) unitID {
	if id.IsZero() {
		return unitID{}
	}
	return unitID{rep: d.intern(id.Replica), seq: id.Counter}
}

// less orders unit ids by (counter, replica).
func (d *rga) less(aSeq uint64, aRep uint32, bSeq uint64, bRep uint32) bool {
	if aSeq != bSeq {
		return aSeq < bSeq
	}
	return d.reps[aRep] < d.reps[bRep]
}

// locate finds unit u: its leaf, span index and offset in the span.
func (d *rga) locate(u unitID) (*node, int, uint32, bool) {
	if int(u.rep) >= len(d.ids) {
		return nil, 0, 0, false
	}
	n, ok := d.ids[u.rep].find(u.seq)
	if !ok {
		return nil, 0, 0, false
	}
	leaf := d.leaves[n]
	for i := range leaf.spans {
		s := &leaf.spans[i]
		if s.rep == u.rep && u.seq >= s.seq && u.seq < s.seq+uint64(s.n) {
			return leaf, i, uint32(u.seq - s.seq), true
		}
	}
	return nil, 0, 0, false
}

// Len returns the number of visible units.
func (d *rga) Len() int { return d.root.vis }

// Pending returns how many ops are buffered waiting for a dependency.
func (d *rga) Pending() int {
	n := 0
	for _, ops := range d.pending {
		n += len(ops)
	}
	return n
}

// do applies one op, then every buffered op it released.
func (d *rga) do(p pendingOp) {
	d.queue = append(d.queue, p)
	d.drain()
}

// drain applies released ops until none is left.
func (d *rga) drain() {
	for len(d.queue) > 0 {
		p := d.queue[len(d.queue)-1]
		d.queue = d.queue[:len(d.queue)-1]
		if p.del {
			d.deleteRange(p.at, p.n)
		} else {
			d.insertUnits(p)
		}
	}
}

func (d *rga) wait(dep unitID, p pendingOp) { d.pending[dep] = append(d.pending[dep], p) }

// release queues the ops waiting for units seq..seq+n-1 of rep.
func (d *rga) release(rep uint32, seq, n uint64) {
	if len(d.pending) == 0 {
		return
	}
	for c := seq; c < seq+n; c++ {
		if ops, ok := d.pending[unitID{rep, c}]; ok {
			delete(d.pending, unitID{rep, c})
			d.queue = append(d.queue, ops...)
		}
	}
}

// insertUnits integrates the units of an insert that are not here yet, or
// buffers the insert until its origin arrives.
func (d *rga) insertUnits(p pendingOp) {
	if p.org.seq != 0 {
		if _, _, _, ok := d.locate(p.org); !ok {
			d.wait(p.org, p)
			return
		}
	}
	for p.n > 0 {
		m := d.presentPrefix(p.at, p.n)
		fresh := m == 0
		if fresh {
			m = d.missingPrefix(p.at, p.n)
		}
		cut := unitOffset(d.list, p.content, uint32(m), uint32(p.n))
		if fresh {
			d.insertRun(p.at, p.org, p.content[:cut], uint32(m), p.dead)
			d.release(p.at.rep, p.at.seq, m)
		}
		p.content = p.content[cut:]
		p.at.seq, p.n = p.at.seq+m, p.n-m
		p.org = unitID{p.at.rep, p.at.seq - 1}
	}
}

// presentPrefix returns how many of n units from u are already here.
func (d *rga) presentPrefix(u unitID, n uint64) uint64 {
	leaf, i, k, ok := d.locate(u)
	if !ok {
		return 0
	}
	return min(n, uint64(leaf.spans[i].n-k))
}

// missingPrefix returns how many of n units from u (absent) are absent.
func (d *rga) missingPrefix(u unitID, n uint64) uint64 {
	if nx, ok := d.ids[u.rep].next(u.seq); ok && nx < u.seq+n {
		return nx - u.seq
	}
	return n
}

// insertRun stores content and integrates a fresh run after org.
func (d *rga) insertRun(at, org unitID, content string, n uint32, dead bool) {
	sp := span{
		seq: at.seq, rep: at.rep, orgSeq: org.seq, orgRep: org.rep, n: n,
		off: uint32(len(d.arena)), blen: uint32(len(content)), del: dead,
	}
	d.arena = append(d.arena, content...)
	if org.seq == 0 {
		d.integrate(sp, nil, 0, 0)
		return
	}
	leaf, i, k, _ := d.locate(org)
	d.integrate(sp, leaf, i, k)
}

// integrate places sp after the unit at (leaf, i, k), or at the document
// start when leaf is nil: past every following unit with a greater id
// (the origin's later-made children and their descendants).
func (d *rga) integrate(sp span, leaf *node, i int, k uint32) {
	var prev *span // the origin's span when sp lands right after it
	if leaf == nil {
		leaf, i = d.first, 0
	} else {
		s := &leaf.spans[i]
		if k+1 < s.n {
			if d.less(s.seq+uint64(k)+1, s.rep, sp.seq, sp.rep) {
				_, _, rl, ri := d.splitSpan(leaf, i, k+1)
				d.insertSpan(rl, ri, sp)
				return
			}
		} else {
			prev = s
		}
		i++
	}
	pleaf := leaf
	leaf, i, skipped := d.skipGreater(leaf, i, &sp)
	if prev != nil && !skipped && d.extend(pleaf, prev, &sp) {
		return
	}
	d.insertSpan(leaf, i, sp)
}

// skipGreater scans right from (leaf, i) past spans whose first unit has a
// greater id than sp's and returns the insertion point.
func (d *rga) skipGreater(leaf *node, i int, sp *span) (*node, int, bool) {
	skipped := false
	for {
		if i == len(leaf.spans) {
			if leaf.next == nil {
				return leaf, i, skipped
			}
			leaf, i = leaf.next, 0
			continue
		}
		if s := &leaf.spans[i]; d.less(s.seq, s.rep, sp.seq, sp.rep) {
			return leaf, i, skipped
		}
		i, skipped = i+1, true
	}
}

// extend appends sp to s when sp continues it: same replica, next counters,
// origin = s's last unit (the caller's case), content adjacent in the arena.
func (d *rga) extend(leaf *node, s, sp *span) bool {
	if s.rep != sp.rep || s.del || sp.del || s.seq+uint64(s.n) != sp.seq || s.off+s.blen != sp.off {
		return false
	}
	s.n += sp.n
	s.blen += sp.blen
	addVis(leaf, int(sp.n))
	return true
}

func (d *rga) insertSpan(leaf *node, i int, sp span) {
	addVis(leaf, sp.visible())
	if leaf, i = d.place(leaf, i, sp); sp.del {
		d.coalesce(leaf, i)
	}
}

// deleteRange tombstones n units from u, buffering the rest of the range
// at the first unit that has not arrived.
func (d *rga) deleteRange(u unitID, n uint64) {
	for n > 0 {
		leaf, i, k, ok := d.locate(u)
		if !ok {
			d.wait(u, pendingOp{del: true, at: u, n: n})
			return
		}
		m := min(n, uint64(leaf.spans[i].n-k))
		d.tombstone(leaf, i, k, uint32(m))
		u.seq, n = u.seq+m, n-m
	}
}

// tombstone marks units k..k+m-1 of the span at (leaf, i) deleted.
func (d *rga) tombstone(leaf *node, i int, k, m uint32) {
	if leaf.spans[i].del {
		return
	}
	if k > 0 {
		_, _, leaf, i = d.splitSpan(leaf, i, k)
	}
	if m < leaf.spans[i].n {
		leaf, i, _, _ = d.splitSpan(leaf, i, m)
	}
	s := &leaf.spans[i]
	s.del, s.off, s.blen = true, 0, 0 // a tombstone's content is never read again
	addVis(leaf, -int(m))
	d.coalesce(leaf, i)
}

// coalesce joins the tombstone at (leaf, i) with tombstoned neighbours in
// its leaf that continue it, so typed-then-deleted text costs one span.
func (d *rga) coalesce(leaf *node, i int) {
	if i+1 < len(leaf.spans) && continues(&leaf.spans[i], &leaf.spans[i+1]) {
		d.join(leaf, i)
	}
	if i > 0 && continues(&leaf.spans[i-1], &leaf.spans[i]) {
		d.join(leaf, i-1)
	}
}

// continues reports whether tombstone b is tombstone a's next units: next
// counters of the same replica, b's origin being a's last unit.
func continues(a, b *span) bool {
	return a.del && b.del && a.rep == b.rep && a.seq+uint64(a.n) == b.seq &&
		b.orgRep == a.rep && b.orgSeq == b.seq-1
}

// join merges span i+1 of leaf into span i.
func (d *rga) join(leaf *node, i int) {
	b := leaf.spans[i+1]
	leaf.spans[i].n += b.n
	d.ids[b.rep].remove(b.seq)
	leaf.spans = slices.Delete(leaf.spans, i+1, i+2)
}

// unitOffset returns the byte offset of unit k in b, which holds n units.
func unitOffset[T string | []byte](list bool, b T, k, n uint32) uint32 {
	switch {
	case k == 0:
		return 0
	case k >= n:
		return uint32(len(b))
	case !list && uint32(len(b)) == n:
		return k
	}
	return uint32(nthUnit(b, int(k), list))
}

// nthUnit returns the byte offset where unit k (k >= 1) of b starts.
func nthUnit[T string | []byte](b T, k int, list bool) int {
	c := 0
	for i := 0; i < len(b); i++ {
		if list {
			if b[i] == '\n' {
				if c++; c == k {
					return i + 1
				}
			}
		} else if b[i]&0xC0 != 0x80 {
			if c == k {
				return i
			}
			c++
		}
	}
	return len(b)
}
