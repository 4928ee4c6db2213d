package crdt

import "encoding/json"

// LWWRegister is a last-writer-wins register: of concurrent sets, the one
// with the greatest HLC timestamp (then OpID) wins.
//
// Ops: {kind:"set", value}.
type LWWRegister struct {
	base
	ok    bool
	ts    Timestamp
	id    OpID
	value json.RawMessage
}

// NewLWWRegister returns an empty register; its Value is nil until set.
func NewLWWRegister() *LWWRegister { return &LWWRegister{} }

// Type returns "lww_register".
func (r *LWWRegister) Type() string { return TypeLWWRegister }

// Set stores v (encoded as JSON) and returns the op.
func (r *LWWRegister) Set(v any) (Op, error) {
	val, err := marshal(v)
	if err != nil {
		return Op{}, err
	}
	id, ts, err := r.stamp(1)
	if err != nil {
		return Op{}, err
	}
	op := Op{ID: id, TS: ts, Kind: OpSet, Value: val}
	return op, r.Apply(op)
}

// Apply applies a set op.
func (r *LWWRegister) Apply(op Op) error {
	if err := checkRegisterOp(&op); err != nil {
		return err
	}
	r.observe(&op, 1)
	if !r.ok || op.after(r.ts, r.id) {
		r.ok, r.ts, r.id, r.value = true, op.TS, op.ID, op.Value
	}
	return nil
}

// Value returns the winning JSON value (json.RawMessage), or nil if unset.
func (r *LWWRegister) Value() any {
	if !r.ok {
		return nil
	}
	return r.value
}

// Merge folds other's state into r.
func (r *LWWRegister) Merge(other *LWWRegister) {
	if other.ok {
		_ = r.Apply(Op{ID: other.id, TS: other.ts, Kind: OpSet, Value: other.value})
	}
}

// checkRegisterOp validates a set op.
func checkRegisterOp(op *Op) error {
	if op.Kind != OpSet {
		return invalid(op, "want kind set")
	}
	if err := checkID(op); err != nil {
		return err
	}
	return checkValue(op)
}
