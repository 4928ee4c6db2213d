package state

import (
	"encoding/json"
	"fmt"
	"sort"
	"unicode/utf8"

	"github.com/agentnode/agentnode/agentd/state/crdt"
)

// editFunc edits one field's CRDT and returns the local ops it made.
type editFunc func(crdt.CRDT) ([]crdt.Op, error)

// translate turns a document change (old -> next, both decoded JSON
// objects) into local CRDT ops on the document's root or_map, field by
// field per the field's CRDT. touched are the top-level fields the patch
// wrote: a register that was written gets a set even if its value did not
// change (so the write still wins over concurrent ones). It returns the ops
// to log; the CRDT already holds them.
func translate(root *crdt.ORMap, old, next map[string]any, touched map[string]bool) ([]crdt.Op, error) {
	var out []crdt.Op
	for _, key := range unionKeys(old, next) {
		ops, err := translateField(root, key, old[key], next, touched[key])
		out = append(out, ops...)
		if err != nil {
			return out, newError(CodeInvalidInput, "field %q: %s", key, err)
		}
	}
	return out, nil
}

func translateField(root *crdt.ORMap, key string, ov any, next map[string]any, touched bool) ([]crdt.Op, error) {
	typ := root.FieldType(key)
	nv, present := next[key]
	if !present {
		return removeField(root, key, typ)
	}
	edit, err := editorFor(typ, ov, nv, touched)
	if err != nil || edit == nil {
		return nil, err
	}
	return root.Update(key, typ, edit)
}

// removeField deletes a field; grow-only fields cannot shrink.
func removeField(root *crdt.ORMap, key, typ string) ([]crdt.Op, error) {
	c, ok := root.Get(key)
	if !ok {
		return nil, nil
	}
	if growOnly(typ) && !isEmpty(c.Value()) {
		return nil, fmt.Errorf("%s is grow-only: it cannot be removed", typ)
	}
	return root.Delete(key)
}

func growOnly(typ string) bool { return typ == crdt.TypeGrowOnlySet || typ == crdt.TypeLogRGA }

func isEmpty(v any) bool {
	switch x := v.(type) {
	case []json.RawMessage:
		return len(x) == 0
	case nil:
		return true
	}
	return false
}

// editorFor returns the edit that takes a field of CRDT typ from ov to nv,
// or nil when nothing needs to change.
func editorFor(typ string, ov, nv any, touched bool) (editFunc, error) {
	switch typ {
	case crdt.TypeLWWRegister, crdt.TypeMVRegister:
		if !touched && equalJSON(ov, nv) {
			return nil, nil
		}
		return setRegister(nv), nil
	case crdt.TypeRGAText:
		return textEditor(nv)
	case crdt.TypeCounter:
		return counterEditor(ov, nv)
	case crdt.TypeFlag:
		return flagEditor(nv, touched)
	case crdt.TypeGrowOnlySet:
		return setEditor(nv)
	case crdt.TypeLogRGA:
		return logEditor(nv)
	case crdt.TypeRGAList:
		return listEditor(nv)
	case crdt.TypeORMap:
		m, ok := nv.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("or_map field needs an object")
		}
		return func(c crdt.CRDT) ([]crdt.Op, error) { return diffMap(c.(*crdt.ORMap), m) }, nil
	}
	return nil, fmt.Errorf("unsupported crdt %s", typ)
}

func setRegister(v any) editFunc {
	return func(c crdt.CRDT) ([]crdt.Op, error) {
		var op crdt.Op
		var err error
		switch r := c.(type) {
		case *crdt.LWWRegister:
			op, err = r.Set(v)
		case *crdt.MVRegister:
			op, err = r.Set(v)
		default:
			return nil, fmt.Errorf("not a register")
		}
		return []crdt.Op{op}, err
	}
}

// textEditor turns the new text into the minimal RGA deletes and inserts.
func textEditor(nv any) (editFunc, error) {
	s, ok := nv.(string)
	if !ok {
		return nil, fmt.Errorf("rga_text field needs a string")
	}
	return func(c crdt.CRDT) ([]crdt.Op, error) {
		t := c.(*crdt.RGAText)
		old := t.String()
		// Only the middle that differs is diffed rune by rune: a large text
		// that is created, appended to or edited in one place is never
		// converted to runes whole.
		pre, suf := commonAffixes(old, s)
		base := utf8.RuneCountInString(old[:pre])
		switch ma, mb := old[pre:len(old)-suf], s[pre:len(s)-suf]; {
		case ma == "" && mb == "":
			return nil, nil
		case ma == "": // a pure insertion (a new text, an append)
			return t.Insert(base, mb), nil
		case mb == "":
			return t.Delete(base, utf8.RuneCountInString(ma)), nil
		}
		a, b := []rune(old[pre:len(old)-suf]), []rune(s[pre:len(s)-suf])
		hs := diffSeq(a, b)
		var ops []crdt.Op
		for i := len(hs) - 1; i >= 0; i-- { // last first: earlier positions stay valid
			h := hs[i]
			ops = append(ops, t.Delete(base+h.pos, h.del)...)
			ops = append(ops, t.Insert(base+h.pos, string(inserted(h, b)))...)
		}
		return ops, nil
	}, nil
}

// commonAffixes returns the byte lengths of the longest common prefix and
// suffix of a and b (not overlapping), both ending on rune boundaries.
func commonAffixes(a, b string) (pre, suf int) {
	n := min(len(a), len(b))
	for pre < n && a[pre] == b[pre] {
		pre++
	}
	for pre > 0 && pre < len(a) && !utf8.RuneStart(a[pre]) {
		pre--
	}
	for pre > 0 && pre < len(b) && !utf8.RuneStart(b[pre]) {
		pre--
	}
	for suf < n-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	for suf > 0 && (!utf8.RuneStart(a[len(a)-suf]) || !utf8.RuneStart(b[len(b)-suf])) {
		suf--
	}
	return pre, suf
}

// counterEditor increments by the difference; counters hold integers. A
// counter the change creates (ov nil) gets an op even at zero (an inc of 0):
// a field written as 0 is kept in the document, so it is returned and
// matched (where {"hits": 0}) as it was written.
func counterEditor(ov, nv any) (editFunc, error) {
	n, ok := nv.(json.Number)
	if !ok {
		return nil, fmt.Errorf("counter field needs a number")
	}
	want, err := n.Int64()
	if err != nil {
		return nil, fmt.Errorf("counter field needs an integer, got %s", n)
	}
	return func(c crdt.CRDT) ([]crdt.Op, error) {
		pn := c.(*crdt.PNCounter)
		d := want - pn.Value().(int64)
		if d == 0 && ov != nil {
			return nil, nil
		}
		op, err := pn.Add(d)
		return []crdt.Op{op}, err
	}, nil
}

func flagEditor(nv any, touched bool) (editFunc, error) {
	b, ok := nv.(bool)
	if !ok {
		return nil, fmt.Errorf("flag field needs a boolean")
	}
	return func(c crdt.CRDT) ([]crdt.Op, error) {
		f := c.(*crdt.Flag)
		if f.Value().(bool) == b && !touched {
			return nil, nil
		}
		// Only one of the two may run: each applies itself locally, and a
		// disable made and dropped would cancel this replica's enables
		// without any other replica hearing of it.
		if b {
			op, err := f.Enable()
			return []crdt.Op{op}, err
		}
		op, err := f.Disable()
		return []crdt.Op{op}, err
	}, nil
}

// setEditor adds the new elements; removing one is refused (grow-only).
func setEditor(nv any) (editFunc, error) {
	arr, ok := nv.([]any)
	if !ok {
		return nil, fmt.Errorf("grow_only_set field needs an array")
	}
	return func(c crdt.CRDT) ([]crdt.Op, error) {
		s := c.(*crdt.GrowOnlySet)
		keys := make([]string, len(arr))
		for i, v := range arr {
			keys[i] = canonicalJSON(v)
		}
		have, err := setMembers(s, keys)
		if err != nil {
			return nil, err
		}
		var ops []crdt.Op
		for i, v := range arr {
			if have[keys[i]] {
				continue
			}
			have[keys[i]] = true
			op, err := s.Add(v)
			if err != nil {
				return ops, err
			}
			ops = append(ops, op)
		}
		return ops, nil
	}, nil
}

// setMembers returns the set's elements (their canonical encodings, the
// form canonicalJSON makes) and refuses a new value that lacks one.
func setMembers(s *crdt.GrowOnlySet, keys []string) (map[string]bool, error) {
	want := make(map[string]bool, len(keys))
	for _, k := range keys {
		want[k] = true
	}
	cur := s.Value().([]json.RawMessage)
	have := make(map[string]bool, len(cur))
	for _, v := range cur {
		if !want[string(v)] {
			return nil, fmt.Errorf("grow_only_set elements cannot be removed (%s)", v)
		}
		have[string(v)] = true
	}
	return have, nil
}

// logEditor appends what follows the current entries; the current entries
// must be unchanged (append-only).
func logEditor(nv any) (editFunc, error) {
	arr, ok := nv.([]any)
	if !ok {
		return nil, fmt.Errorf("log field needs an array")
	}
	return func(c crdt.CRDT) ([]crdt.Op, error) {
		l := c.(*crdt.LogRGA)
		cur := l.Value().([]json.RawMessage)
		if len(arr) < len(cur) {
			return nil, fmt.Errorf("log is append-only: entries cannot be removed")
		}
		for i, e := range cur {
			if !equalJSON(e, arr[i]) {
				return nil, fmt.Errorf("log is append-only: entry %d cannot change", i)
			}
		}
		var ops []crdt.Op
		for _, v := range arr[len(cur):] {
			op, err := l.Append(v)
			if err != nil {
				return ops, err
			}
			ops = append(ops, op)
		}
		return ops, nil
	}, nil
}

// listEditor diffs the list by element and turns each hunk into an RGA
// delete and insert.
func listEditor(nv any) (editFunc, error) {
	arr, ok := nv.([]any)
	if !ok {
		return nil, fmt.Errorf("rga_list field needs an array")
	}
	return func(c crdt.CRDT) ([]crdt.Op, error) {
		l := c.(*crdt.RGAList)
		cur := l.Values()
		a, b := make([]string, len(cur)), make([]string, len(arr))
		for i, v := range cur {
			a[i] = canonicalJSON(v)
		}
		for i, v := range arr {
			b[i] = canonicalJSON(v)
		}
		return listOps(l, arr, diffSeq(a, b))
	}, nil
}

func listOps(l *crdt.RGAList, arr []any, hs []hunk) ([]crdt.Op, error) {
	var ops []crdt.Op
	for i := len(hs) - 1; i >= 0; i-- {
		h := hs[i]
		del, err := l.Delete(h.pos, h.del)
		ops = append(ops, del...)
		if err != nil {
			return ops, err
		}
		ins, err := l.Insert(h.pos, inserted(h, arr)...)
		ops = append(ops, ins...)
		if err != nil {
			return ops, err
		}
	}
	return ops, nil
}

// diffMap brings a nested or_map to next: absent keys are removed, object
// values (non-empty) become nested maps merged key by key, other values
// lww registers.
func diffMap(m *crdt.ORMap, next map[string]any) ([]crdt.Op, error) {
	var ops []crdt.Op
	for _, k := range m.Keys() {
		if _, ok := next[k]; !ok {
			del, err := m.Delete(k)
			ops = append(ops, del...)
			if err != nil {
				return ops, err
			}
		}
	}
	for _, k := range sortedKeys(next) {
		more, err := diffEntry(m, k, next[k])
		ops = append(ops, more...)
		if err != nil {
			return ops, err
		}
	}
	return ops, nil
}

func diffEntry(m *crdt.ORMap, k string, v any) ([]crdt.Op, error) {
	if obj, ok := v.(map[string]any); ok && len(obj) > 0 {
		return m.Update(k, crdt.TypeORMap, func(c crdt.CRDT) ([]crdt.Op, error) {
			return diffMap(c.(*crdt.ORMap), obj)
		})
	}
	if cur, ok := m.Get(k); ok && cur.Type() == crdt.TypeLWWRegister && equalJSON(cur.Value(), v) {
		return nil, nil
	}
	return m.Update(k, crdt.TypeLWWRegister, setRegister(v))
}

// canonicalJSON encodes a JSON value with sorted keys (numbers as written).
func canonicalJSON(v any) string {
	b, err := json.Marshal(normalize(v))
	if err != nil {
		return ""
	}
	return string(b)
}

func unionKeys(a, b map[string]any) []string {
	seen := make(map[string]bool, len(a)+len(b))
	for k := range a {
		seen[k] = true
	}
	for k := range b {
		seen[k] = true
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
