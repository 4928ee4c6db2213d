package crdt

import (
	"bytes"
	"encoding/json"
)

// RGAList is a collaborative list of JSON values (rga_list, the default for
// the list container): the same RGA as RGAText with JSON values as units.
//
// Ops: as rga_text, with the inserted values in value (a JSON array) instead
// of text.
type RGAList struct {
	rga
}

// NewRGAList returns an empty list.
func NewRGAList() *RGAList { return &RGAList{rga: newRGA(true)} }

// Type returns "rga_list".
func (l *RGAList) Type() string { return TypeRGAList }

// Apply applies an insert or delete op.
func (l *RGAList) Apply(op Op) error {
	if op.Kind != OpInsert {
		return l.apply(&op, "", 0)
	}
	content, n, err := encodeUnits(op.Value)
	if err != nil {
		return invalid(&op, err.Error())
	}
	return l.apply(&op, content, n)
}

// Insert inserts values before position pos (clamped to [0, Len]).
func (l *RGAList) Insert(pos int, values ...any) ([]Op, error) {
	raw, err := marshal(values)
	if err != nil || len(values) == 0 {
		return nil, err
	}
	content, n, err := encodeUnits(raw)
	if err != nil {
		return nil, err
	}
	op, err := l.localInsert(pos, content, n)
	if err != nil {
		return nil, err
	}
	op.Value = raw
	return []Op{op}, nil
}

// Delete deletes n values from position pos (both clamped to the list).
func (l *RGAList) Delete(pos, n int) ([]Op, error) { return l.localDelete(pos, n) }

// Values returns the list's values in order.
func (l *RGAList) Values() []json.RawMessage {
	out := make([]json.RawMessage, 0, l.Len())
	l.visibleContent(func(p []byte) {
		for len(p) > 0 {
			i := bytes.IndexByte(p, '\n')
			out = append(out, json.RawMessage(bytes.Clone(p[:i])))
			p = p[i+1:]
		}
	})
	return out
}

// Value returns the values ([]json.RawMessage).
func (l *RGAList) Value() any { return l.Values() }

// Merge folds other's state (including its buffered ops) into l.
func (l *RGAList) Merge(other *RGAList) { l.merge(&other.rga) }

// encodeUnits turns a JSON array into units: each element compacted (so it
// has no raw newline) and terminated by '\n'.
func encodeUnits(raw json.RawMessage) (string, int, error) {
	var vals []json.RawMessage
	if err := json.Unmarshal(raw, &vals); err != nil {
		return "", 0, err
	}
	var b bytes.Buffer
	for _, v := range vals {
		if err := json.Compact(&b, v); err != nil {
			return "", 0, err
		}
		b.WriteByte('\n')
	}
	return b.String(), len(vals), nil
}
