package crdt

import (
	"encoding/json"
	"slices"
)

// LogRGA is an append-only log (log_rga; the spec's append_only): entries
// are ordered by their HLC timestamp, then op id. Because a replica's clock
// witnesses what it has seen, an entry appended after seeing another sorts
// after it; concurrent appends interleave by time. Entries are never removed.
//
// Ops: {kind:"append", value}.
type LogRGA struct {
	base
	entries []logEntry
}

type logEntry struct {
	ts    Timestamp
	id    OpID
	value json.RawMessage
}

// NewLogRGA returns an empty log.
func NewLogRGA() *LogRGA { return &LogRGA{} }

// Type returns "log_rga".
func (l *LogRGA) Type() string { return TypeLogRGA }

// Append appends v.
func (l *LogRGA) Append(v any) (Op, error) {
	val, err := marshal(v)
	if err != nil {
		return Op{}, err
	}
	id, ts, err := l.stamp(1)
	if err != nil {
		return Op{}, err
	}
	op := Op{ID: id, TS: ts, Kind: OpAppend, Value: val}
	return op, l.Apply(op)
}

// Apply applies an append op.
func (l *LogRGA) Apply(op Op) error {
	if op.Kind != OpAppend {
		return invalid(&op, "want kind append")
	}
	if err := checkID(&op); err != nil {
		return err
	}
	if err := checkValue(&op); err != nil {
		return err
	}
	l.observe(&op, 1)
	l.insert(logEntry{ts: op.TS, id: op.ID, value: op.Value})
	return nil
}

// insert places e in order unless an entry with its id is already there.
func (l *LogRGA) insert(e logEntry) {
	n := len(l.entries)
	if n == 0 || l.entries[n-1].cmp(e) < 0 {
		l.entries = append(l.entries, e)
		return
	}
	i, found := slices.BinarySearchFunc(l.entries, e, logEntry.cmp)
	if !found {
		l.entries = slices.Insert(l.entries, i, e)
	}
}

func (e logEntry) cmp(o logEntry) int { return stampCompare(e.ts, e.id, o.ts, o.id) }

// Len returns the number of entries.
func (l *LogRGA) Len() int { return len(l.entries) }

// Value returns the entries ([]json.RawMessage) in log order.
func (l *LogRGA) Value() any {
	out := make([]json.RawMessage, len(l.entries))
	for i, e := range l.entries {
		out[i] = e.value
	}
	return out
}

// Merge folds other's entries into l.
func (l *LogRGA) Merge(other *LogRGA) {
	l.absorb(&other.base)
	for _, e := range other.entries {
		l.insert(e)
	}
}
