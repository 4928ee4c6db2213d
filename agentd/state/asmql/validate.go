package asmql

import (
	"encoding/json"
	"math"
	"strconv"
)

// validate checks a query against the grammar and lim (with defaults).
func validate(q *Query, lim Limits) error {
	if q == nil {
		return invalid("", "no query")
	}
	if q.From == "" || len(q.From) > maxFromLen {
		return invalid("/from", "from must be a schema URI of 1 to "+strconv.Itoa(maxFromLen)+" bytes")
	}
	if q.Limit < 0 {
		return invalid("/limit", "limit must not be negative")
	}
	if len(q.Cursor) > lim.MaxBytes {
		return badCursor("cursor too long")
	}
	if err := validateSelect(q.Select); err != nil {
		return err
	}
	if _, err := sortKeys(q.Order); err != nil {
		return err
	}
	if q.Where == nil {
		return nil
	}
	w := walker{lim: lim}
	return w.walk(q.Where, "/where", 1)
}

// validateSelect checks the select list: valid, distinct fields.
func validateSelect(sel []string) error {
	if len(sel) > maxSelect {
		return tooComplex("/select", "more than "+strconv.Itoa(maxSelect)+" fields")
	}
	seen := map[string]bool{}
	for i, s := range sel {
		p := ptr("/select", strconv.Itoa(i))
		if _, ok := parseField(s); !ok {
			return invalid(p, "bad field path")
		}
		if seen[s] {
			return invalid(p, "duplicate field")
		}
		seen[s] = true
	}
	return nil
}

// walker checks depth and node count over an expression tree.
type walker struct {
	lim   Limits
	nodes int
}

// walk checks e, found at path at the given depth.
func (w *walker) walk(e Expr, path string, depth int) error {
	if depth > w.lim.MaxDepth {
		return tooComplex(path, "nested deeper than "+strconv.Itoa(w.lim.MaxDepth))
	}
	if w.nodes++; w.nodes > w.lim.MaxNodes {
		return tooComplex(path, "more than "+strconv.Itoa(w.lim.MaxNodes)+" nodes")
	}
	switch e := e.(type) {
	case And:
		return w.list(e, ptr(path, keyAnd), depth)
	case Or:
		return w.list(e, ptr(path, keyOr), depth)
	case Not:
		return w.walk(e.X, ptr(path, keyNot), depth+1)
	case Cmp:
		return checkCmp(e, ptr(ptr(path, e.Field), string(e.Op)), w.lim)
	default:
		return invalid(path, "missing or unknown expression")
	}
}

// list checks the operands of an And or Or.
func (w *walker) list(es []Expr, path string, depth int) error {
	if len(es) == 0 {
		return invalid(path, "needs at least one operand")
	}
	for i, e := range es {
		if err := w.walk(e, ptr(path, strconv.Itoa(i)), depth+1); err != nil {
			return err
		}
	}
	return nil
}

// checkCmp checks a comparison's field, operator and operand.
func checkCmp(c Cmp, path string, lim Limits) error {
	if _, ok := parseField(c.Field); !ok {
		return invalid(path, "bad field path")
	}
	switch c.Op {
	case OpEq, OpNe, OpContains:
		return checkScalar(c.Value, path)
	case OpGt, OpGte, OpLt, OpLte:
		return checkOrderable(c.Value, path)
	case OpIn, OpNin:
		return checkList(c.Value, path, lim)
	case OpExists:
		if _, ok := c.Value.(bool); !ok {
			return invalid(path, "$exists takes true or false")
		}
		return nil
	default:
		return invalid(path, "unknown operator")
	}
}

func checkScalar(v any, path string) error {
	if _, ok := scalar(v); !ok {
		return invalid(path, "operand must be a string, number, boolean or null")
	}
	return nil
}

func checkOrderable(v any, path string) error {
	switch s, _ := scalar(v); s.(type) {
	case string, int64, float64:
		return nil
	}
	return invalid(path, "operand must be a number or a string")
}

func checkList(v any, path string, lim Limits) error {
	list, ok := v.([]any)
	if !ok {
		return invalid(path, "operand must be an array")
	}
	if len(list) > lim.MaxInList {
		return tooComplex(path, "more than "+strconv.Itoa(lim.MaxInList)+" values")
	}
	for i, x := range list {
		if err := checkScalar(x, ptr(path, strconv.Itoa(i))); err != nil {
			return err
		}
	}
	return nil
}

// scalar normalises a scalar operand to nil, bool, string, int64 or
// float64 (json.Number as Parse reads numbers). It reports false for
// anything else, NaN and infinities included.
func scalar(v any) (any, bool) {
	switch x := v.(type) {
	case nil, bool, string, int64:
		return x, true
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case uint32:
		return int64(x), true
	case float32:
		return floatScalar(float64(x))
	case float64:
		return floatScalar(x)
	case json.Number:
		n, err := number("", x)
		return n, err == nil
	}
	return nil, false
}

// floatScalar keeps finite floats.
func floatScalar(f float64) (any, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, false
	}
	return f, true
}
