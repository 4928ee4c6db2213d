package crdt

// Local edits, validation and state export shared by RGAText and RGAList.

// apply validates an insert or delete op and applies it. content is the
// insert's encoded units (n of them).
func (d *rga) apply(op *Op, content string, n int) error {
	if err := checkID(op); err != nil {
		return err
	}
	switch op.Kind {
	case OpInsert:
		if n == 0 {
			return invalid(op, "empty insert")
		}
		if !op.Ref.IsZero() && (op.Ref.Replica == "" || op.Ref.Counter >= op.ID.Counter) {
			return invalid(op, "origin must have a smaller counter")
		}
		d.observe(op, uint64(n))
		d.do(pendingOp{at: d.unit(op.ID), org: d.unit(op.Ref), content: content, n: uint64(n)})
	case OpDelete:
		if op.Ref.IsZero() || op.Ref.Replica == "" || op.Len <= 0 {
			return invalid(op, "delete needs ref and len")
		}
		d.observe(op, 1)
		d.do(pendingOp{del: true, at: d.unit(op.Ref), n: uint64(op.Len)})
	default:
		return invalid(op, "want kind insert or delete")
	}
	return nil
}

// localInsert inserts n units of content before visible position pos
// (clamped to [0, Len]) and returns the op without its payload field.
func (d *rga) localInsert(pos int, content string, n int) (Op, error) {
	id, ts, err := d.stamp(n)
	if err != nil {
		return Op{}, err
	}
	op := Op{ID: id, TS: ts, Kind: OpInsert}
	sp := span{
		seq: id.Counter, rep: d.intern(id.Replica), n: uint32(n),
		off: uint32(len(d.arena)), blen: uint32(len(content)),
	}
	d.arena = append(d.arena, content...)
	pos = max(0, min(pos, d.Len()))
	if pos == 0 {
		d.integrate(sp, nil, 0, 0)
	} else {
		leaf, i, k := d.findVisible(pos - 1)
		s := &leaf.spans[i]
		sp.orgSeq, sp.orgRep = s.seq+uint64(k), s.rep
		op.Ref = OpID{Replica: d.reps[s.rep], Counter: sp.orgSeq}
		d.integrate(sp, leaf, i, k)
	}
	d.observe(&op, uint64(n))
	d.release(sp.rep, sp.seq, uint64(n)) // only a forged op can wait for a unit made now
	d.drain()
	return op, nil
}

// localDelete deletes n units from visible position pos (both clamped) and
// returns one op per run of consecutive ids.
func (d *rga) localDelete(pos, n int) ([]Op, error) {
	if d.clock == nil {
		return nil, ErrNoClock
	}
	pos = max(0, min(pos, d.Len()))
	n = max(0, min(n, d.Len()-pos))
	var ops []Op
	for n > 0 {
		leaf, i, k := d.findVisible(pos)
		s := leaf.spans[i]
		m := min(uint32(n), s.n-k)
		ops = d.appendDelete(ops, s.rep, s.seq+uint64(k), int(m))
		d.tombstone(leaf, i, k, m)
		n -= int(m)
	}
	for i := range ops {
		ops[i].ID, ops[i].TS, _ = d.stamp(1)
		d.observe(&ops[i], 1)
	}
	return ops, nil
}

// appendDelete extends the last delete op when the range continues it.
func (d *rga) appendDelete(ops []Op, rep uint32, seq uint64, m int) []Op {
	ref := OpID{Replica: d.reps[rep], Counter: seq}
	if l := len(ops) - 1; l >= 0 && ops[l].Ref.Replica == ref.Replica &&
		ops[l].Ref.Counter+uint64(ops[l].Len) == seq {
		ops[l].Len += m
		return ops
	}
	return append(ops, Op{Kind: OpDelete, Ref: ref, Len: m})
}

// merge folds other's state into d: every span as an insert (and a delete
// if tombstoned), then other's buffered ops.
func (d *rga) merge(other *rga) {
	re := func(u unitID) unitID {
		if u.seq == 0 {
			return unitID{}
		}
		return unitID{rep: d.intern(other.reps[u.rep]), seq: u.seq}
	}
	for l := other.first; l != nil; l = l.next {
		for _, s := range l.spans {
			at := re(unitID{s.rep, s.seq})
			content := string(other.arena[s.off : s.off+s.blen])
			d.do(pendingOp{at: at, org: re(unitID{s.orgRep, s.orgSeq}), content: content, n: uint64(s.n), dead: s.del})
			if s.del {
				d.do(pendingOp{del: true, at: at, n: uint64(s.n)})
			}
		}
	}
	for _, ops := range other.pending {
		for _, p := range ops {
			p.at, p.org = re(p.at), re(p.org)
			d.do(p)
		}
	}
	d.absorb(&other.base)
}

// visibleContent calls f with the content of each visible span in order.
func (d *rga) visibleContent(f func([]byte)) {
	for l := d.first; l != nil; l = l.next {
		for i := range l.spans {
			if s := &l.spans[i]; !s.del {
				f(d.arena[s.off : s.off+s.blen])
			}
		}
	}
}
