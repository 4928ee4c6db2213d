package crdt

// PNCounter is a counter of signed increments (the spec's "counter"). Its
// state is the set of increments keyed by op id, so applying an op twice
// counts it once and merging is set union; Value is their sum.
//
// Ops: {kind:"inc", delta}.
type PNCounter struct {
	base
	ops  map[OpID]int64
	p, n int64 // sums of positive and negated negative deltas
}

// NewPNCounter returns a counter at zero.
func NewPNCounter() *PNCounter { return &PNCounter{ops: map[OpID]int64{}} }

// Type returns "counter".
func (c *PNCounter) Type() string { return TypeCounter }

// Add adds delta (negative to decrement).
func (c *PNCounter) Add(delta int64) (Op, error) {
	id, ts, err := c.stamp(1)
	if err != nil {
		return Op{}, err
	}
	op := Op{ID: id, TS: ts, Kind: OpInc, Delta: delta}
	return op, c.Apply(op)
}

// Apply applies an inc op.
func (c *PNCounter) Apply(op Op) error {
	if op.Kind != OpInc {
		return invalid(&op, "want kind inc")
	}
	if err := checkID(&op); err != nil {
		return err
	}
	c.observe(&op, 1)
	c.add(op.ID, op.Delta)
	return nil
}

func (c *PNCounter) add(id OpID, delta int64) {
	if _, dup := c.ops[id]; dup {
		return
	}
	c.ops[id] = delta
	if delta >= 0 {
		c.p += delta
	} else {
		c.n -= delta
	}
}

// Value returns the count (int64).
func (c *PNCounter) Value() any { return c.p - c.n }

// Merge folds other's increments into c.
func (c *PNCounter) Merge(other *PNCounter) {
	c.absorb(&other.base)
	for id, d := range other.ops {
		c.add(id, d)
	}
}
