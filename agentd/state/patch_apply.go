package state

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// errTestFailed is a failed "test" op: the whole patch is refused.
type errTestFailed struct{ path string }

func (e errTestFailed) Error() string { return "test failed at " + e.path }

// Apply applies the patch to a copy of doc and returns the result and the
// top-level fields it touched. doc is not modified. A failed test gives
// CONFLICT, any other failure INVALID_INPUT; either way nothing applies.
func (p *Patch) Apply(doc map[string]any) (map[string]any, map[string]bool, error) {
	var cur any = deepCopy(doc)
	touched := map[string]bool{}
	for i, o := range p.ops {
		next, err := o.apply(cur)
		if err != nil {
			code := CodeInvalidInput
			if _, ok := err.(errTestFailed); ok {
				code = CodeConflict
			}
			return nil, nil, newError(code, "patch op %d (%s %s): %s", i, o.Op, o.Path, err)
		}
		cur = next
		o.touch(touched, doc, cur)
	}
	out, ok := cur.(map[string]any)
	if !ok {
		return nil, nil, newError(CodeInvalidInput, "patch: the document must stay a JSON object")
	}
	return out, touched, nil
}

// touch records the top-level fields an op wrote (all of them for a
// whole-document replace).
func (o *patchOp) touch(touched map[string]bool, before map[string]any, after any) {
	if o.Op == opTest {
		return
	}
	if len(o.path) > 0 {
		touched[o.path[0]] = true
	}
	if o.Op == opMove && len(o.from) > 0 {
		touched[o.from[0]] = true
	}
	if len(o.path) == 0 {
		for k := range before {
			touched[k] = true
		}
		if m, ok := after.(map[string]any); ok {
			for k := range m {
				touched[k] = true
			}
		}
	}
}

// apply runs one op on the document and returns the new document.
func (o *patchOp) apply(doc any) (any, error) {
	switch o.Op {
	case opAdd:
		return addAt(doc, o.path, deepCopy(o.value))
	case opRemove:
		return removeAt(doc, o.path)
	case opReplace:
		return replaceAt(doc, o.path, deepCopy(o.value))
	case "$set":
		if _, err := getAt(doc, o.path); err == nil {
			return replaceAt(doc, o.path, deepCopy(o.value))
		}
		return addAt(doc, o.path, deepCopy(o.value))
	case opMove:
		return moveOp(doc, o.from, o.path)
	case opCopy:
		v, err := getAt(doc, o.from)
		if err != nil {
			return nil, err
		}
		return addAt(doc, o.path, deepCopy(v))
	case opTest:
		return testOp(doc, o.path, o.value)
	case opInc:
		return incOp(doc, o.path, o.value)
	case opPush:
		return pushOp(doc, o.path, o.value)
	}
	return nil, fmt.Errorf("unknown op %q", o.Op)
}

func moveOp(doc any, from, path []string) (any, error) {
	if len(path) > len(from) && slices.Equal(path[:len(from)], from) {
		return nil, fmt.Errorf("cannot move a value into itself")
	}
	v, err := getAt(doc, from)
	if err != nil {
		return nil, err
	}
	if doc, err = removeAt(doc, from); err != nil {
		return nil, err
	}
	return addAt(doc, path, v)
}

func testOp(doc any, path []string, want any) (any, error) {
	got, err := getAt(doc, path)
	if err != nil || !equalJSON(got, want) {
		return nil, errTestFailed{path: pointerString(path)}
	}
	return doc, nil
}

// incOp adds a number; an absent target is set to it.
func incOp(doc any, path []string, delta any) (any, error) {
	d, ok := delta.(json.Number)
	if !ok {
		return nil, fmt.Errorf("$inc needs a number")
	}
	cur, err := getAt(doc, path)
	if err != nil {
		return addAt(doc, path, d)
	}
	n, ok := cur.(json.Number)
	if !ok {
		return nil, fmt.Errorf("$inc target is not a number")
	}
	sum, err := addNumbers(n, d)
	if err != nil {
		return nil, err
	}
	return replaceAt(doc, path, sum)
}

// addNumbers adds exactly when both are integers, else as float64.
func addNumbers(a, b json.Number) (json.Number, error) {
	x, errX := a.Int64()
	y, errY := b.Int64()
	if errX == nil && errY == nil {
		if s := x + y; (s > x) == (y > 0) || y == 0 {
			return json.Number(strconv.FormatInt(s, 10)), nil
		}
		return "", fmt.Errorf("$inc overflows")
	}
	f, errF := a.Float64()
	g, errG := b.Float64()
	if errF != nil || errG != nil || math.IsInf(f+g, 0) {
		return "", fmt.Errorf("$inc: bad number")
	}
	return json.Number(strconv.FormatFloat(f+g, 'g', -1, 64)), nil
}

// pushOp appends a value (or each of {"$each": [...]}); an absent target
// becomes an array.
func pushOp(doc any, path []string, v any) (any, error) {
	vals := []any{v}
	if m, ok := v.(map[string]any); ok && len(m) == 1 {
		if each, ok := m["$each"].([]any); ok {
			vals = each
		}
	}
	cur, err := getAt(doc, path)
	if err != nil {
		return addAt(doc, path, deepCopy(vals))
	}
	arr, ok := cur.([]any)
	if !ok {
		return nil, fmt.Errorf("$push target is not an array")
	}
	return replaceAt(doc, path, append(slices.Clone(arr), deepCopy(vals).([]any)...))
}
