package crdt

import (
	"fmt"
	"maps"
	"slices"
)

// ORMap is an add-wins observed-remove map from string keys to nested CRDTs
// (or_map). Every update of a key is a put op carrying the nested op; the
// put's id is a "dot" of the key. A remove cancels the dots its replica had
// seen, so a put concurrent with a remove survives (add wins). A key is
// present while it has a live dot.
//
// A key's value is the nested CRDT built from its live puts only: a remove
// resets what it observed, and a concurrent update survives on its own
// (Riak-map semantics). Puts are kept so that value can be rebuilt.
//
// Ops: {kind:"put", key, type, child}, {kind:"remove", key, deps:[dots]}.
type ORMap struct {
	base
	fields  map[string]string // declared field CRDTs (object container); may be nil
	entries map[string]*mapEntry
	removed map[OpID]string // cancelled dots -> key
}

type mapEntry struct {
	live map[OpID]Op     // live puts by dot
	vals map[string]CRDT // nested value per CRDT name (normally one)
	top  Op              // the live put with the greatest (TS, ID): its Type is shown
}

// NewORMap returns an empty map whose keys may hold any CRDT.
func NewORMap() *ORMap {
	return &ORMap{entries: map[string]*mapEntry{}, removed: map[OpID]string{}}
}

// NewObject returns an or_map for the object container: fields maps a field
// name to its x-crdt; undeclared fields are lww_register. A put that gives a
// declared field another CRDT is invalid.
func NewObject(fields map[string]string) (*ORMap, error) {
	for f, name := range fields {
		if _, ok := registry[name]; !ok {
			return nil, fmt.Errorf("%w: %q for field %q", ErrUnknownCRDT, name, f)
		}
	}
	m := NewORMap()
	m.fields = maps.Clone(fields)
	return m, nil
}

// Type returns "or_map".
func (m *ORMap) Type() string { return TypeORMap }

// Bind sets the clock for m and every nested CRDT.
func (m *ORMap) Bind(clock *HLC) {
	m.clock = clock
	for _, e := range m.entries {
		for _, v := range e.vals {
			v.Bind(clock)
		}
	}
}

// FieldType returns the CRDT name a key uses by default: its declared
// x-crdt, else lww_register.
func (m *ORMap) FieldType(key string) string {
	if t, ok := m.fields[key]; ok {
		return t
	}
	return TypeLWWRegister
}

// Set stores a plain JSON value under key as an lww_register.
func (m *ORMap) Set(key string, v any) (Op, error) {
	ops, err := m.Update(key, TypeLWWRegister, func(c CRDT) ([]Op, error) {
		op, err := c.(*LWWRegister).Set(v)
		return []Op{op}, err
	})
	if err != nil {
		return Op{}, err
	}
	return ops[0], nil
}

// Update edits the nested CRDT of type typ ("" = FieldType(key)) under key:
// edit receives it (create it if absent), makes local edits and returns
// their ops, which Update wraps into put ops, records and returns.
func (m *ORMap) Update(key, typ string, edit func(CRDT) ([]Op, error)) ([]Op, error) {
	if m.clock == nil {
		return nil, ErrNoClock
	}
	if typ == "" {
		typ = m.FieldType(key)
	}
	if want, ok := m.fields[key]; ok && want != typ {
		return nil, fmt.Errorf("%w: field %q is %s, not %s", ErrTypeMismatch, key, want, typ)
	}
	e := m.entry(key)
	v, err := e.value(typ, m.clock)
	if err != nil {
		return nil, err
	}
	children, err := edit(v)
	out := make([]Op, 0, len(children))
	for _, c := range children {
		put := Op{ID: c.ID, TS: c.TS, Kind: OpPut, Key: key, Type: typ, Child: &c}
		m.observe(&put, 1)
		e.record(put)
		out = append(out, put)
	}
	m.dropIfEmpty(key, e)
	return out, err
}

// Delete removes key, cancelling the puts this replica has seen. It returns
// no op if key is absent.
func (m *ORMap) Delete(key string) ([]Op, error) {
	e, ok := m.entries[key]
	if !ok {
		return nil, nil
	}
	id, ts, err := m.stamp(1)
	if err != nil {
		return nil, err
	}
	op := Op{ID: id, TS: ts, Kind: OpRemove, Key: key, Deps: sortedIDs(e.live)}
	return []Op{op}, m.Apply(op)
}

// Get returns the nested CRDT shown for key.
func (m *ORMap) Get(key string) (CRDT, bool) {
	e, ok := m.entries[key]
	if !ok {
		return nil, false
	}
	return e.vals[e.top.Type], true
}

// Keys returns the present keys, sorted.
func (m *ORMap) Keys() []string { return slices.Sorted(maps.Keys(m.entries)) }

// Apply applies a put or remove op.
func (m *ORMap) Apply(op Op) error {
	if err := checkID(&op); err != nil {
		return err
	}
	switch op.Kind {
	case OpPut:
		return m.applyPut(op)
	case OpRemove:
		m.observe(&op, 1)
		return m.cancel(op.Key, op.Deps)
	}
	return invalid(&op, "want kind put or remove")
}

func (m *ORMap) applyPut(op Op) error {
	if op.Child == nil || op.Type == "" {
		return invalid(&op, "put needs type and child")
	}
	if want, ok := m.fields[op.Key]; ok && want != op.Type {
		return invalid(&op, fmt.Sprintf("field %q is %s, not %s", op.Key, want, op.Type))
	}
	m.observe(&op, 1)
	if _, gone := m.removed[op.ID]; gone {
		return nil
	}
	e := m.entry(op.Key)
	defer m.dropIfEmpty(op.Key, e)
	if _, dup := e.live[op.ID]; dup {
		return nil
	}
	v, err := e.value(op.Type, m.clock)
	if err != nil {
		return invalid(&op, err.Error())
	}
	if err := v.Apply(*op.Child); err != nil {
		return fmt.Errorf("or_map key %q: %w", op.Key, err)
	}
	e.record(op)
	return nil
}

// cancel removes dots of key and resets its value to what remains.
func (m *ORMap) cancel(key string, dots []OpID) error {
	e := m.entries[key]
	changed := false
	for _, d := range dots {
		if _, done := m.removed[d]; done {
			continue
		}
		m.removed[d] = key
		if e == nil {
			continue
		}
		if _, ok := e.live[d]; ok {
			delete(e.live, d)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	if len(e.live) == 0 {
		delete(m.entries, key)
		return nil
	}
	return e.rebuild(m.clock)
}

// Value returns map[string]any: each present key's nested Value.
func (m *ORMap) Value() any {
	out := make(map[string]any, len(m.entries))
	for k, e := range m.entries {
		out[k] = e.vals[e.top.Type].Value()
	}
	return out
}

// Merge folds other's state into m. Nested values merge through their ops,
// so nested CRDTs of every kind merge correctly.
func (m *ORMap) Merge(other *ORMap) error {
	byKey := map[string][]OpID{}
	for d, k := range other.removed {
		byKey[k] = append(byKey[k], d)
	}
	for k, dots := range byKey {
		if err := m.cancel(k, dots); err != nil {
			return err
		}
	}
	for _, e := range other.entries {
		for _, op := range e.sortedPuts() {
			if err := m.Apply(op); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m *ORMap) entry(key string) *mapEntry {
	e, ok := m.entries[key]
	if !ok {
		e = &mapEntry{live: map[OpID]Op{}, vals: map[string]CRDT{}}
		m.entries[key] = e
	}
	return e
}

// dropIfEmpty forgets an entry that got no live put.
func (m *ORMap) dropIfEmpty(key string, e *mapEntry) {
	if len(e.live) == 0 {
		delete(m.entries, key)
	}
}

// value returns the nested CRDT of type typ, creating it.
func (e *mapEntry) value(typ string, clock *HLC) (CRDT, error) {
	if v, ok := e.vals[typ]; ok {
		return v, nil
	}
	v, err := New(typ)
	if err != nil {
		return nil, err
	}
	if clock != nil {
		v.Bind(clock)
	}
	e.vals[typ] = v
	return v, nil
}

// record adds a live put.
func (e *mapEntry) record(op Op) {
	e.live[op.ID] = op
	if len(e.live) == 1 || op.after(e.top.TS, e.top.ID) {
		e.top = op
	}
}

// rebuild recreates the nested values from the live puts.
func (e *mapEntry) rebuild(clock *HLC) error {
	puts := e.sortedPuts()
	e.vals, e.live = map[string]CRDT{}, map[OpID]Op{}
	for _, op := range puts {
		v, err := e.value(op.Type, clock)
		if err != nil {
			return err
		}
		if err := v.Apply(*op.Child); err != nil {
			return err
		}
		e.record(op)
	}
	return nil
}

// sortedPuts returns the live puts in id order (a causal order).
func (e *mapEntry) sortedPuts() []Op {
	out := make([]Op, 0, len(e.live))
	for _, id := range sortedIDs(e.live) {
		out = append(out, e.live[id])
	}
	return out
}
