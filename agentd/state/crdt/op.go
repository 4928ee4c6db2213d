package crdt

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
)

// OpID names an op uniquely: the replica that made it and a counter drawn
// from that replica's HLC. An rga_text insert of n characters reserves n
// counters: its characters are (Replica, Counter), (Replica, Counter+1), ...
// The zero OpID means "none" (for an insert: the start of the document).
type OpID struct {
	Replica ReplicaID `json:"replica"`
	Counter uint64    `json:"counter"`
}

// IsZero reports whether id is the zero OpID.
func (id OpID) IsZero() bool { return id == OpID{} }

// Compare orders ids by (Counter, Replica). Because counters are Lamport
// counters this order extends causality: an op is after every op its replica
// had seen.
func (id OpID) Compare(o OpID) int {
	if c := cmp.Compare(id.Counter, o.Counter); c != 0 {
		return c
	}
	return strings.Compare(string(id.Replica), string(o.Replica))
}

// String renders id as "counter@replica".
func (id OpID) String() string { return fmt.Sprintf("%d@%s", id.Counter, id.Replica) }

// Op kinds. Each CRDT accepts the kinds listed in its documentation.
const (
	OpSet     = "set"     // lww_register, mv_register: Value (mv: Deps = superseded values)
	OpAdd     = "add"     // grow_only_set: Value
	OpInc     = "inc"     // counter: Delta
	OpEnable  = "enable"  // flag
	OpDisable = "disable" // flag: Deps = observed enables
	OpInsert  = "insert"  // rga_text: Text after Ref; rga_list: Value (JSON array) after Ref
	OpDelete  = "delete"  // rga_text, rga_list: Len units from Ref on
	OpAppend  = "append"  // log_rga: Value
	OpPut     = "put"     // or_map: Child applied to Key's nested Type
	OpRemove  = "remove"  // or_map: Deps = observed puts of Key
)

// Op is one CRDT operation: plain data with stable JSON field names, so it
// can be stored in an op log and shipped inside a signed event. Only the
// fields a kind uses are set; the rest are zero and omitted from JSON.
//
// An Op is immutable once made: CRDTs keep and share ops without copying.
type Op struct {
	ID    OpID            `json:"id"`
	TS    Timestamp       `json:"ts"`
	Kind  string          `json:"kind"`
	Key   string          `json:"key,omitempty"`   // or_map: the key
	Type  string          `json:"type,omitempty"`  // or_map put: the nested CRDT's name
	Value json.RawMessage `json:"value,omitempty"` // a JSON value
	Text  string          `json:"text,omitempty"`  // rga_text insert: the characters
	Ref   OpID            `json:"ref,omitzero"`    // rga: origin (insert) or first target (delete)
	Len   int             `json:"len,omitempty"`   // rga delete: units from Ref on
	Delta int64           `json:"delta,omitempty"` // counter: signed increment
	Deps  []OpID          `json:"deps,omitempty"`  // ops this one observed and supersedes
	Child *Op             `json:"child,omitempty"` // or_map put: the nested op
}

// after reports whether op wins a last-writer-wins contest against
// (ts, id): by timestamp, then by id.
func (op *Op) after(ts Timestamp, id OpID) bool { return stampCompare(op.TS, op.ID, ts, id) > 0 }

// stampCompare orders (timestamp, id) pairs: by timestamp, then by id.
func stampCompare(ta Timestamp, ia OpID, tb Timestamp, ib OpID) int {
	if c := ta.Compare(tb); c != 0 {
		return c
	}
	return ia.Compare(ib)
}

// invalid wraps ErrInvalidOp with the op's kind and id and a reason.
func invalid(op *Op, reason string) error {
	return fmt.Errorf("%w: %s %s: %s", ErrInvalidOp, op.Kind, op.ID, reason)
}

// checkID rejects an op without a replica or counter.
func checkID(op *Op) error {
	if op.ID.Replica == "" || op.ID.Counter == 0 {
		return invalid(op, "missing id")
	}
	return nil
}

// checkValue rejects an op whose Value is not one valid JSON value.
func checkValue(op *Op) error {
	if len(op.Value) == 0 || !json.Valid(op.Value) {
		return invalid(op, "value is not JSON")
	}
	return nil
}

// marshal encodes a local value for an op.
func marshal(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("crdt: encode value: %w", err)
	}
	return b, nil
}
