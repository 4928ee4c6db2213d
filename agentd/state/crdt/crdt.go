package crdt

import (
	"fmt"
	"maps"
	"slices"
)

// CRDT is a replicated data type driven by ops.
//
// Apply is idempotent (a duplicate op is ignored) and ops commute: replicas
// that apply the same set of ops, in any order, have the same Value. An op
// whose causal dependency has not arrived yet (an rga insert after a
// character not yet seen) is buffered inside the CRDT and applied when the
// dependency arrives; it is never dropped. Apply returns ErrInvalidOp (and
// changes nothing) for a malformed op.
//
// Value returns a JSON-encodable snapshot: it does not alias internal state
// that later ops change.
//
// Local edits (Set, Insert, Add, ...) stamp ops with the clock given to Bind,
// apply them, and return them for shipping to other replicas. A CRDT is not
// safe for concurrent use; guard it with the caller's lock.
type CRDT interface {
	// Type returns the registry name, e.g. "rga_text".
	Type() string
	// Apply applies a local or remote op.
	Apply(op Op) error
	// Value returns the current value as a JSON-encodable Go value.
	Value() any
	// Bind sets the clock used to stamp local edits.
	Bind(clock *HLC)
}

// Registry names: the canonical x-crdt keywords of NIP-8, the append_only
// alias and the rga_list extension.
const (
	TypeLWWRegister = "lww_register"
	TypeMVRegister  = "mv_register"
	TypeRGAText     = "rga_text"
	TypeGrowOnlySet = "grow_only_set"
	TypeORMap       = "or_map"
	TypeCounter     = "counter"
	TypeFlag        = "flag"
	TypeLogRGA      = "log_rga"
	// TypeAppendOnly is the x-asm crdt of the spec's log container; it is the
	// log_rga CRDT.
	TypeAppendOnly = "append_only"
	// TypeRGAList is this package's RGA of JSON values, the default for the
	// list container (the spec names "RGA / Y-list" but no keyword).
	TypeRGAList = "rga_list"
)

var registry = map[string]func() CRDT{
	TypeLWWRegister: func() CRDT { return NewLWWRegister() },
	TypeMVRegister:  func() CRDT { return NewMVRegister() },
	TypeRGAText:     func() CRDT { return NewRGAText() },
	TypeGrowOnlySet: func() CRDT { return NewGrowOnlySet() },
	TypeORMap:       func() CRDT { return NewORMap() },
	TypeCounter:     func() CRDT { return NewPNCounter() },
	TypeFlag:        func() CRDT { return NewFlag() },
	TypeLogRGA:      func() CRDT { return NewLogRGA() },
	TypeAppendOnly:  func() CRDT { return NewLogRGA() },
	TypeRGAList:     func() CRDT { return NewRGAList() },
}

// New returns an empty, unbound CRDT for a registry name, or an error
// wrapping ErrUnknownCRDT.
func New(name string) (CRDT, error) {
	f, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q (known: %v)", ErrUnknownCRDT, name, Names())
	}
	return f(), nil
}

// Names returns the registry names, sorted.
func Names() []string { return slices.Sorted(maps.Keys(registry)) }

// Compile-time checks that every CRDT implements the interface.
var (
	_ CRDT = (*LWWRegister)(nil)
	_ CRDT = (*MVRegister)(nil)
	_ CRDT = (*RGAText)(nil)
	_ CRDT = (*RGAList)(nil)
	_ CRDT = (*GrowOnlySet)(nil)
	_ CRDT = (*ORMap)(nil)
	_ CRDT = (*PNCounter)(nil)
	_ CRDT = (*Flag)(nil)
	_ CRDT = (*LogRGA)(nil)
)

// base holds what every CRDT needs to stamp local ops: the bound clock and
// the greatest timestamp and op counter applied so far, which the clock
// witnesses before stamping, so a local op is ordered after everything the
// CRDT has seen even if it applied remote ops before it was bound.
type base struct {
	clock   *HLC
	seenTS  Timestamp
	seenCtr uint64
}

// Bind sets the clock used to stamp local edits.
func (b *base) Bind(clock *HLC) { b.clock = clock }

// observe records an applied op that used counters ID.Counter..+width-1.
func (b *base) observe(op *Op, width uint64) {
	if op.TS.Compare(b.seenTS) > 0 {
		b.seenTS = op.TS
	}
	if end := op.ID.Counter + width - 1; end > b.seenCtr {
		b.seenCtr = end
	}
}

// absorb takes in what another instance has seen (state merge).
func (b *base) absorb(o *base) {
	if o.seenTS.Compare(b.seenTS) > 0 {
		b.seenTS = o.seenTS
	}
	b.seenCtr = max(b.seenCtr, o.seenCtr)
}

// stamp returns the id and timestamp for a local op using n counters.
func (b *base) stamp(n int) (OpID, Timestamp, error) {
	if b.clock == nil {
		return OpID{}, Timestamp{}, ErrNoClock
	}
	id, ts := b.clock.stamp(n, b.seenTS, b.seenCtr)
	return id, ts, nil
}
