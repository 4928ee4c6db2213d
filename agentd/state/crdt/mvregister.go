package crdt

import (
	"encoding/json"
	"maps"
	"slices"
)

// MVRegister is a multi-value register: a set supersedes the values its
// replica had seen (listed in Deps); concurrent sets all survive, and Value
// returns every surviving value.
//
// Ops: {kind:"set", value, deps:[ids of the values it replaces]}.
type MVRegister struct {
	base
	live map[OpID]mvEntry
	dead map[OpID]struct{} // superseded set ops, kept so a late arrival stays dead
}

type mvEntry struct {
	ts    Timestamp
	value json.RawMessage
}

// NewMVRegister returns an empty register.
func NewMVRegister() *MVRegister {
	return &MVRegister{live: map[OpID]mvEntry{}, dead: map[OpID]struct{}{}}
}

// Type returns "mv_register".
func (r *MVRegister) Type() string { return TypeMVRegister }

// Set replaces every value this replica sees with v.
func (r *MVRegister) Set(v any) (Op, error) {
	val, err := marshal(v)
	if err != nil {
		return Op{}, err
	}
	id, ts, err := r.stamp(1)
	if err != nil {
		return Op{}, err
	}
	op := Op{ID: id, TS: ts, Kind: OpSet, Value: val, Deps: sortedIDs(r.live)}
	return op, r.Apply(op)
}

// Apply applies a set op.
func (r *MVRegister) Apply(op Op) error {
	if err := checkRegisterOp(&op); err != nil {
		return err
	}
	r.observe(&op, 1)
	for _, d := range op.Deps {
		r.dead[d] = struct{}{}
		delete(r.live, d)
	}
	if _, gone := r.dead[op.ID]; !gone {
		r.live[op.ID] = mvEntry{ts: op.TS, value: op.Value}
	}
	return nil
}

// Value returns the surviving values ([]json.RawMessage) ordered by
// timestamp, then id.
func (r *MVRegister) Value() any {
	ids := slices.SortedFunc(maps.Keys(r.live), func(a, b OpID) int {
		return stampCompare(r.live[a].ts, a, r.live[b].ts, b)
	})
	out := make([]json.RawMessage, len(ids))
	for i, id := range ids {
		out[i] = r.live[id].value
	}
	return out
}

// Merge folds other's state into r.
func (r *MVRegister) Merge(other *MVRegister) {
	r.absorb(&other.base)
	for d := range other.dead {
		r.dead[d] = struct{}{}
		delete(r.live, d)
	}
	for id, e := range other.live {
		if _, gone := r.dead[id]; !gone {
			r.live[id] = e
		}
	}
}

// sortedIDs returns a set's ids in OpID order (deterministic op encoding).
func sortedIDs[V any](set map[OpID]V) []OpID {
	return slices.SortedFunc(maps.Keys(set), OpID.Compare)
}
