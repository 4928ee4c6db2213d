package crdt

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"slices"
)

// GrowOnlySet is a set that only grows: add is the only op and the value is
// the union of every added element. Elements are JSON values compared by
// their canonical encoding (object keys sorted, no insignificant space).
//
// Ops: {kind:"add", value}.
type GrowOnlySet struct {
	base
	elems map[string]json.RawMessage // canonical encoding -> element
}

// NewGrowOnlySet returns an empty set.
func NewGrowOnlySet() *GrowOnlySet { return &GrowOnlySet{elems: map[string]json.RawMessage{}} }

// Type returns "grow_only_set".
func (s *GrowOnlySet) Type() string { return TypeGrowOnlySet }

// Add adds v.
func (s *GrowOnlySet) Add(v any) (Op, error) {
	val, err := marshal(v)
	if err != nil {
		return Op{}, err
	}
	id, ts, err := s.stamp(1)
	if err != nil {
		return Op{}, err
	}
	op := Op{ID: id, TS: ts, Kind: OpAdd, Value: val}
	return op, s.Apply(op)
}

// Apply applies an add op.
func (s *GrowOnlySet) Apply(op Op) error {
	if op.Kind != OpAdd {
		return invalid(&op, "want kind add")
	}
	if err := checkID(&op); err != nil {
		return err
	}
	c, err := canonical(op.Value)
	if err != nil {
		return invalid(&op, err.Error())
	}
	s.observe(&op, 1)
	s.elems[string(c)] = c
	return nil
}

// Contains reports whether v is in the set.
func (s *GrowOnlySet) Contains(v any) bool {
	b, err := json.Marshal(v)
	if err != nil {
		return false
	}
	c, err := canonical(b)
	_, ok := s.elems[string(c)]
	return err == nil && ok
}

// Len returns the number of elements.
func (s *GrowOnlySet) Len() int { return len(s.elems) }

// Value returns the elements ([]json.RawMessage) in canonical-encoding order.
func (s *GrowOnlySet) Value() any {
	keys := slices.Sorted(maps.Keys(s.elems))
	out := make([]json.RawMessage, len(keys))
	for i, k := range keys {
		out[i] = s.elems[k]
	}
	return out
}

// Merge folds other's elements into s.
func (s *GrowOnlySet) Merge(other *GrowOnlySet) {
	s.absorb(&other.base)
	maps.Copy(s.elems, other.elems)
}

var errTrailing = errors.New("trailing data after value")

// canonical re-encodes a JSON value with sorted keys and numbers kept as
// written.
func canonical(raw json.RawMessage) (json.RawMessage, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errTrailing
	}
	return json.Marshal(v)
}
