package crdt

// Flag is an enable-wins flag: it is on while some enable op has not been
// observed by a disable. A disable cancels only the enables its replica had
// seen, so an enable concurrent with a disable wins.
//
// Ops: {kind:"enable"}, {kind:"disable", deps:[observed enable ids]}.
type Flag struct {
	base
	live map[OpID]struct{} // enables not yet disabled
	off  map[OpID]struct{} // enables some disable observed
}

// NewFlag returns a flag that is off.
func NewFlag() *Flag { return &Flag{live: map[OpID]struct{}{}, off: map[OpID]struct{}{}} }

// Type returns "flag".
func (f *Flag) Type() string { return TypeFlag }

// Enable turns the flag on.
func (f *Flag) Enable() (Op, error) { return f.local(OpEnable, nil) }

// Disable turns the flag off, cancelling the enables this replica has seen.
func (f *Flag) Disable() (Op, error) { return f.local(OpDisable, sortedIDs(f.live)) }

func (f *Flag) local(kind string, deps []OpID) (Op, error) {
	id, ts, err := f.stamp(1)
	if err != nil {
		return Op{}, err
	}
	op := Op{ID: id, TS: ts, Kind: kind, Deps: deps}
	return op, f.Apply(op)
}

// Apply applies an enable or disable op.
func (f *Flag) Apply(op Op) error {
	if err := checkID(&op); err != nil {
		return err
	}
	switch op.Kind {
	case OpEnable:
		if _, gone := f.off[op.ID]; !gone {
			f.live[op.ID] = struct{}{}
		}
	case OpDisable:
		f.cancel(op.Deps)
	default:
		return invalid(&op, "want kind enable or disable")
	}
	f.observe(&op, 1)
	return nil
}

func (f *Flag) cancel(ids []OpID) {
	for _, d := range ids {
		f.off[d] = struct{}{}
		delete(f.live, d)
	}
}

// Value reports whether the flag is on (bool).
func (f *Flag) Value() any { return len(f.live) > 0 }

// Merge folds other's state into f.
func (f *Flag) Merge(other *Flag) {
	f.absorb(&other.base)
	for d := range other.off {
		f.off[d] = struct{}{}
		delete(f.live, d)
	}
	for id := range other.live {
		if _, gone := f.off[id]; !gone {
			f.live[id] = struct{}{}
		}
	}
}
