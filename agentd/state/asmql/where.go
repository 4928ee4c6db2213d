package asmql

import "strings"

// Every predicate written here is true, false or NULL, and NULL always
// means false (a comparison with an absent field). AND, OR and WHERE already
// treat NULL that way; NOT is written as NOT coalesce(p, 0) so that the
// negation of "absent" is true.

// numeric is the JSON-type guard for numbers (json_extract gives booleans
// as 0/1, so a value match alone is not enough).
const numeric = " IN ('integer','real')"

// expr writes a where-expression (validated).
func (w *sqlw) expr(e Expr) {
	switch e := e.(type) {
	case And:
		w.join([]Expr(e), " AND ")
	case Or:
		w.join([]Expr(e), " OR ")
	case Not:
		w.not(func() { w.expr(e.X) })
	case Cmp:
		w.cmp(e)
	}
}

// join writes operands joined by op, parenthesised.
func (w *sqlw) join(es []Expr, op string) {
	w.str("(")
	for i, e := range es {
		w.sep(i, op)
		w.expr(e)
	}
	w.str(")")
}

// not writes the negation of what inner writes.
func (w *sqlw) not(inner func()) {
	w.str("NOT coalesce(")
	inner()
	w.str(", 0)")
}

// cmp writes one comparison.
func (w *sqlw) cmp(c Cmp) {
	f, _ := parseField(c.Field)
	if f.kind != colNone {
		w.colCmp(f, c.Op, c.Value)
		return
	}
	switch c.Op {
	case OpEq:
		w.docEq(f, c.Value)
	case OpNe:
		w.not(func() { w.docEq(f, c.Value) })
	case OpGt, OpGte, OpLt, OpLte:
		w.docRange(f, c.Op, c.Value)
	case OpIn:
		w.docIn(f, c.Value.([]any))
	case OpNin:
		w.not(func() { w.docIn(f, c.Value.([]any)) })
	case OpExists:
		w.docExists(f, c.Value.(bool))
	case OpContains:
		w.docContains(f, c.Value)
	}
}

// sqlOps maps range operators to SQL.
var sqlOps = map[Op]string{OpEq: " = ", OpGt: " > ", OpGte: " >= ", OpLt: " < ", OpLte: " <= "}

// docEq: same JSON type and equal value. Strings and numbers compare
// json_extract (indexable) and check the type; true/false/null check the
// type only (plus the 0/1 value for booleans, so an index can serve it).
func (w *sqlw) docEq(f field, v any) {
	switch s, _ := scalar(v); x := s.(type) {
	case nil:
		w.str(f.jtype(), " = 'null'")
	case bool:
		w.str("(", f.value(), " = ")
		w.bind(b2i(x))
		w.str(" AND ", f.jtype(), " = '", jsonBool(x), "')")
	case string:
		w.typed(f, " = ", x, " = 'text'")
	default:
		w.typed(f, " = ", x, numeric)
	}
}

// docRange: strings compare with strings (bytewise), numbers with numbers;
// a field of another type never matches.
func (w *sqlw) docRange(f field, op Op, v any) {
	s, _ := scalar(v)
	guard := numeric
	if _, ok := s.(string); ok {
		guard = " = 'text'"
	}
	w.typed(f, sqlOps[op], s, guard)
}

// typed writes (value <op> ? AND type <guard>).
func (w *sqlw) typed(f field, op string, v any, guard string) {
	w.str("(", f.value(), op)
	w.bind(v)
	w.str(" AND ", f.jtype(), guard, ")")
}

// docIn: equal to any listed value (same semantics as $eq per element).
func (w *sqlw) docIn(f field, list []any) {
	var strs, nums []any
	var types []string
	for _, v := range list {
		switch s, _ := scalar(v); x := s.(type) {
		case nil:
			types = append(types, "'null'")
		case bool:
			types = append(types, "'"+jsonBool(x)+"'")
		case string:
			strs = append(strs, x)
		default:
			nums = append(nums, x)
		}
	}
	var parts []func()
	if len(strs) > 0 {
		parts = append(parts, func() { w.inList(f, strs, " = 'text'") })
	}
	if len(nums) > 0 {
		parts = append(parts, func() { w.inList(f, nums, numeric) })
	}
	if len(types) > 0 {
		parts = append(parts, func() { w.str(f.jtype(), " IN (", strings.Join(types, ", "), ")") })
	}
	w.any(parts)
}

// inList writes (value IN (?, ...) AND type <guard>).
func (w *sqlw) inList(f field, vals []any, guard string) {
	w.str("(", f.value(), " IN (")
	for i, v := range vals {
		w.sep(i, ", ")
		w.bind(v)
	}
	w.str(") AND ", f.jtype(), guard, ")")
}

// any writes the disjunction of parts; none is false.
func (w *sqlw) any(parts []func()) {
	if len(parts) == 0 {
		w.str("0")
		return
	}
	w.str("(")
	for i, part := range parts {
		w.sep(i, " OR ")
		part()
	}
	w.str(")")
}

// docExists: the path is present (JSON null counts as present).
func (w *sqlw) docExists(f field, exists bool) {
	if exists {
		w.str(f.jtype(), " IS NOT NULL")
		return
	}
	w.str(f.jtype(), " IS NULL")
}

// docContains: an array field has an element equal to v ($eq semantics),
// or, for a string v, a string field contains v as a substring
// (case-sensitive).
func (w *sqlw) docContains(f field, v any) {
	s, _ := scalar(v)
	parts := []func(){func() { w.member(f, s) }}
	if str, ok := s.(string); ok {
		parts = append(parts, func() {
			w.str("(", f.jtype(), " = 'text' AND instr(", f.value(), ", ")
			w.bind(str)
			w.str(") > 0)")
		})
	}
	w.any(parts)
}

// member writes the array-membership test for a scalar.
func (w *sqlw) member(f field, v any) {
	w.str("(", f.jtype(), " = 'array' AND EXISTS (SELECT 1 FROM json_each(doc, '", f.path, "') AS je WHERE ")
	switch x := v.(type) {
	case nil:
		w.str("je.type = 'null'")
	case bool:
		w.str("je.type = '", jsonBool(x), "'")
	case string:
		w.str("je.type = 'text' AND je.value = ")
		w.bind(x)
	default:
		w.str("je.type", numeric, " AND je.value = ")
		w.bind(x)
	}
	w.str("))")
}

// colCmp compares a metadata column. Columns are NOT NULL and of one type
// (id text, created_at/updated_at integer): an operand of another type never
// matches, $exists is constant, $contains is a substring test on id.
func (w *sqlw) colCmp(f field, op Op, v any) {
	switch op {
	case OpEq, OpGt, OpGte, OpLt, OpLte:
		w.colRange(f, op, v)
	case OpNe:
		w.not(func() { w.colRange(f, OpEq, v) })
	case OpIn:
		w.colIn(f, v.([]any))
	case OpNin:
		w.not(func() { w.colIn(f, v.([]any)) })
	case OpExists:
		w.str(sqlBool(v.(bool)))
	case OpContains:
		w.colContains(f, v)
	}
}

func (w *sqlw) colRange(f field, op Op, v any) {
	s, _ := scalar(v)
	if !colAccepts(f, s) {
		w.str("0")
		return
	}
	w.str("(", f.col, sqlOps[op])
	w.bind(s)
	w.str(")")
}

func (w *sqlw) colIn(f field, list []any) {
	var vals []any
	for _, v := range list {
		if s, _ := scalar(v); colAccepts(f, s) {
			vals = append(vals, s)
		}
	}
	if len(vals) == 0 {
		w.str("0")
		return
	}
	w.str("(", f.col, " IN (")
	for i, v := range vals {
		w.sep(i, ", ")
		w.bind(v)
	}
	w.str("))")
}

func (w *sqlw) colContains(f field, v any) {
	s, ok := v.(string)
	if !ok || f.kind != colText {
		w.str("0")
		return
	}
	w.str("(instr(", f.col, ", ")
	w.bind(s)
	w.str(") > 0)")
}

// colAccepts reports whether a normalised scalar has the column's type.
func colAccepts(f field, s any) bool {
	switch s.(type) {
	case string:
		return f.kind == colText
	case int64, float64:
		return f.kind == colInt
	}
	return false
}

// sqlBool is SQL's 1 or 0.
func sqlBool(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func jsonBool(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
