package crdt

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
)

// models lists every CRDT with a random local edit, its state merge and,
// where a simple one exists, an oracle computing its value from the op set.
func models() []model {
	return []model{
		{name: TypeLWWRegister, new: func() CRDT { return NewLWWRegister() }, edit: editLWW,
			merge: mergeOf(func(a, b *LWWRegister) { a.Merge(b) }), oracle: oracleLWW},
		{name: TypeMVRegister, new: func() CRDT { return NewMVRegister() }, edit: editMV,
			merge: mergeOf(func(a, b *MVRegister) { a.Merge(b) }), oracle: oracleMV},
		{name: TypeGrowOnlySet, new: func() CRDT { return NewGrowOnlySet() }, edit: editGSet,
			merge: mergeOf(func(a, b *GrowOnlySet) { a.Merge(b) })},
		{name: TypeCounter, new: func() CRDT { return NewPNCounter() }, edit: editCounter,
			merge: mergeOf(func(a, b *PNCounter) { a.Merge(b) }), oracle: oracleCounter},
		{name: TypeFlag, new: func() CRDT { return NewFlag() }, edit: editFlag,
			merge: mergeOf(func(a, b *Flag) { a.Merge(b) }), oracle: oracleFlag},
		{name: TypeLogRGA, new: func() CRDT { return NewLogRGA() }, edit: editLog,
			merge: mergeOf(func(a, b *LogRGA) { a.Merge(b) }), oracle: oracleLog},
		{name: TypeRGAText, new: func() CRDT { return NewRGAText() }, edit: editText,
			merge: mergeOf(func(a, b *RGAText) { a.Merge(b) })},
		{name: TypeRGAList, new: func() CRDT { return NewRGAList() }, edit: editList,
			merge: mergeOf(func(a, b *RGAList) { a.Merge(b) })},
		{name: TypeORMap, new: func() CRDT { return NewORMap() }, edit: editMap,
			merge: func(a, b CRDT) error { return a.(*ORMap).Merge(b.(*ORMap)) }},
		{name: "object", new: newTestObject, edit: editObject,
			merge: func(a, b CRDT) error { return a.(*ORMap).Merge(b.(*ORMap)) }},
	}
}

func mergeOf[T CRDT](f func(a, b T)) func(a, b CRDT) error {
	return func(a, b CRDT) error { f(a.(T), b.(T)); return nil }
}

func one(op Op, err error) ([]Op, error) { return []Op{op}, err }

func editLWW(r *rand.Rand, c CRDT) ([]Op, error) { return one(c.(*LWWRegister).Set(r.IntN(100))) }

func editMV(r *rand.Rand, c CRDT) ([]Op, error) {
	return one(c.(*MVRegister).Set(fmt.Sprintf("v%d", r.IntN(100))))
}

func editGSet(r *rand.Rand, c CRDT) ([]Op, error) {
	if r.IntN(2) == 0 {
		return one(c.(*GrowOnlySet).Add(map[string]any{"k": r.IntN(4), "a": "x"}))
	}
	return one(c.(*GrowOnlySet).Add(r.IntN(30)))
}

func editCounter(r *rand.Rand, c CRDT) ([]Op, error) {
	return one(c.(*PNCounter).Add(int64(r.IntN(11) - 5)))
}

func editFlag(r *rand.Rand, c CRDT) ([]Op, error) {
	if r.IntN(2) == 0 {
		return one(c.(*Flag).Enable())
	}
	return one(c.(*Flag).Disable())
}

func editLog(r *rand.Rand, c CRDT) ([]Op, error) {
	return one(c.(*LogRGA).Append(fmt.Sprintf("e%d", r.IntN(1000))))
}

func editText(r *rand.Rand, c CRDT) ([]Op, error) {
	t := c.(*RGAText)
	if t.Len() > 0 && r.IntN(3) == 0 {
		pos := r.IntN(t.Len())
		return t.Delete(pos, 1+r.IntN(min(4, t.Len()-pos))), nil
	}
	return t.Insert(r.IntN(t.Len()+1), randText(r, 4)), nil
}

func editList(r *rand.Rand, c CRDT) ([]Op, error) {
	l := c.(*RGAList)
	if l.Len() > 0 && r.IntN(3) == 0 {
		pos := r.IntN(l.Len())
		return l.Delete(pos, 1+r.IntN(min(3, l.Len()-pos)))
	}
	vals := make([]any, 1+r.IntN(3))
	for i := range vals {
		vals[i] = map[string]any{"n": r.IntN(100), "s": "line\nbreak"}
	}
	return l.Insert(r.IntN(l.Len()+1), vals...)
}

// editMap touches keys of several nested kinds, one key whose kind varies
// between replicas, and removes keys.
func editMap(r *rand.Rand, c CRDT) ([]Op, error) {
	m := c.(*ORMap)
	switch r.IntN(7) {
	case 0:
		return one(m.Set("lww", r.IntN(10)))
	case 1:
		return m.Update("cnt", TypeCounter, func(c CRDT) ([]Op, error) { return editCounter(r, c) })
	case 2:
		return m.Update("txt", TypeRGAText, func(c CRDT) ([]Op, error) { return editText(r, c) })
	case 3:
		return m.Update("sub", TypeORMap, func(c CRDT) ([]Op, error) {
			return one(c.(*ORMap).Set(fmt.Sprintf("k%d", r.IntN(3)), r.IntN(10)))
		})
	case 4:
		typ := []string{TypeFlag, TypeCounter, TypeMVRegister}[r.IntN(3)]
		return m.Update("any", typ, func(c CRDT) ([]Op, error) {
			switch c := c.(type) {
			case *Flag:
				return editFlag(r, c)
			case *PNCounter:
				return editCounter(r, c)
			default:
				return editMV(r, c)
			}
		})
	}
	return m.Delete([]string{"lww", "cnt", "txt", "sub", "any"}[r.IntN(5)])
}

func newTestObject() CRDT {
	m, err := NewObject(map[string]string{"tags": TypeGrowOnlySet, "body": TypeRGAText})
	if err != nil {
		panic(err)
	}
	return m
}

func editObject(r *rand.Rand, c CRDT) ([]Op, error) {
	m := c.(*ORMap)
	switch r.IntN(4) {
	case 0:
		return one(m.Set("title", fmt.Sprintf("t%d", r.IntN(10))))
	case 1:
		return m.Update("tags", "", func(c CRDT) ([]Op, error) { return editGSet(r, c) })
	case 2:
		return m.Update("body", "", func(c CRDT) ([]Op, error) { return editText(r, c) })
	}
	return m.Delete([]string{"title", "tags", "body"}[r.IntN(3)])
}

// Oracles.

func oracleLWW(ops []Op) any {
	var best *Op
	for i := range ops {
		if best == nil || ops[i].after(best.TS, best.ID) {
			best = &ops[i]
		}
	}
	if best == nil {
		return nil
	}
	return best.Value
}

// superseded returns every id named in some op's deps.
func superseded(ops []Op) map[OpID]bool {
	dead := map[OpID]bool{}
	for _, op := range ops {
		for _, d := range op.Deps {
			dead[d] = true
		}
	}
	return dead
}

func oracleMV(ops []Op) any {
	dead := superseded(ops)
	var live []Op
	for _, op := range ops {
		if !dead[op.ID] {
			live = append(live, op)
		}
	}
	slices.SortFunc(live, func(a, b Op) int { return stampCompare(a.TS, a.ID, b.TS, b.ID) })
	out := []json.RawMessage{}
	for _, op := range live {
		out = append(out, op.Value)
	}
	return out
}

func oracleCounter(ops []Op) any {
	var sum int64
	for _, op := range ops {
		sum += op.Delta
	}
	return sum
}

func oracleFlag(ops []Op) any {
	dead := superseded(ops)
	for _, op := range ops {
		if op.Kind == OpEnable && !dead[op.ID] {
			return true
		}
	}
	return false
}

func oracleLog(ops []Op) any {
	sorted := slices.Clone(ops)
	slices.SortFunc(sorted, func(a, b Op) int { return stampCompare(a.TS, a.ID, b.TS, b.ID) })
	out := []json.RawMessage{}
	for _, op := range sorted {
		out = append(out, op.Value)
	}
	return out
}
