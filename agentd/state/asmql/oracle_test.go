package asmql

import (
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// The oracle evaluates ASM-QL over in-memory documents with the semantics
// docs/ASMQL.md states, independently of SQL. The differential tests compare
// it with Exec.

// orow is a document with its metadata columns.
type orow struct {
	id               string
	doc              map[string]any
	created, updated int64
}

// oget resolves a field: (value, present).
func oget(r orow, name string) (any, bool) {
	switch name {
	case "id":
		return r.id, true
	case "createdAt", "created_at":
		return float64(r.created), true
	case "updatedAt", "updated_at":
		return float64(r.updated), true
	}
	var cur any = r.doc
	for _, seg := range strings.Split(strings.TrimPrefix(name, "$."), ".") {
		switch c := cur.(type) {
		case map[string]any:
			if isIndex(seg) {
				return nil, false
			}
			v, ok := c[seg]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || !isIndex(seg) || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// omatch evaluates e on r.
func omatch(e Expr, r orow) bool {
	switch e := e.(type) {
	case nil:
		return true
	case And:
		return !slices.ContainsFunc(e, func(x Expr) bool { return !omatch(x, r) })
	case Or:
		return slices.ContainsFunc(e, func(x Expr) bool { return omatch(x, r) })
	case Not:
		return !omatch(e.X, r)
	case Cmp:
		v, ok := oget(r, e.Field)
		return ocmp(e.Op, v, ok, e.Value)
	}
	panic("unknown expr")
}

// ocmp applies one operator to a field value (v, present).
func ocmp(op Op, v any, present bool, q any) bool {
	switch op {
	case OpEq:
		return present && oeq(v, q)
	case OpNe:
		return !(present && oeq(v, q))
	case OpIn, OpNin:
		in := present && slices.ContainsFunc(q.([]any), func(x any) bool { return oeq(v, x) })
		return in == (op == OpIn)
	case OpExists:
		return present == q.(bool)
	case OpContains:
		return present && ocontains(v, q)
	}
	c, ok := ocompare(v, q)
	if !present || !ok {
		return false
	}
	return map[Op]bool{OpGt: c > 0, OpGte: c >= 0, OpLt: c < 0, OpLte: c <= 0}[op]
}

// oeq: same JSON type, equal value; numbers numerically.
func oeq(v, q any) bool {
	s, _ := scalar(q)
	switch x := s.(type) {
	case nil:
		return v == nil
	case bool, string:
		return v == x
	}
	c, ok := ocompare(v, q)
	return ok && c == 0
}

// ocompare compares numbers with numbers and strings with strings.
func ocompare(v, q any) (int, bool) {
	s, _ := scalar(q)
	switch x := s.(type) {
	case string:
		vs, ok := v.(string)
		return strings.Compare(vs, x), ok
	case int64, float64:
		vn, ok := onum(v)
		qn, _ := onum(x)
		return cmp.Compare(vn, qn), ok
	}
	return 0, false
}

// onum reads a JSON number (not a boolean).
func onum(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	}
	return 0, false
}

// ocontains: array membership, or substring of a string field.
func ocontains(v, q any) bool {
	if a, ok := v.([]any); ok {
		return slices.ContainsFunc(a, func(x any) bool { return oeq(x, q) })
	}
	vs, ok1 := v.(string)
	qs, ok2 := q.(string)
	return ok1 && ok2 && strings.Contains(vs, qs)
}

// okey is a sort key as SQLite orders json_extract values: NULL (absent or
// null) < numbers (booleans as 0/1) < text (strings; arrays and objects as
// their JSON text).
type okey struct {
	class int
	num   float64
	str   string
}

func okeyOf(r orow, name string) okey {
	v, ok := oget(r, name)
	switch x := v.(type) {
	case bool:
		return okey{class: 1, num: float64(b2i(x))}
	case float64:
		return okey{class: 1, num: x}
	case string:
		return okey{class: 2, str: x}
	case []any, map[string]any:
		b, _ := json.Marshal(x)
		return okey{class: 2, str: string(b)}
	}
	_ = ok
	return okey{}
}

func (a okey) compare(b okey) int {
	return cmp.Or(cmp.Compare(a.class, b.class), cmp.Compare(a.num, b.num), strings.Compare(a.str, b.str))
}

// oquery returns the ids of all matching rows in query order.
func oquery(q *Query, rows []orow) []string {
	keys, _ := sortKeys(q.Order)
	var hits []orow
	for _, r := range rows {
		if omatch(q.Where, r) {
			hits = append(hits, r)
		}
	}
	slices.SortStableFunc(hits, func(a, b orow) int {
		for _, k := range keys {
			c := okeyOf(a, orderName(k)).compare(okeyOf(b, orderName(k)))
			if k.desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.id
	}
	return out
}

// orderName maps a resolved sort key back to a field name the oracle reads.
func orderName(k sortKey) string {
	if k.f.kind != colNone {
		return map[string]string{"id": "id", "created_at": "createdAt", "updated_at": "updatedAt"}[k.f.col]
	}
	p := strings.ReplaceAll(k.f.path[2:], "[", ".")
	return "$." + strings.ReplaceAll(p, "]", "")
}
