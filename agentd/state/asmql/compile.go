package asmql

import (
	"math"
	"strconv"
	"strings"
)

// Target is where a query runs: a docs table of the store's contract
// (id, doc, schema_uri, scope, created_at, updated_at, deleted) and a trusted
// base predicate that the caller builds from From and the reader's rights.
type Target struct {
	Table    string // table name; quoted as an identifier, never otherwise trusted
	Base     string // trusted SQL predicate, e.g. "schema_uri = ? AND deleted = 0"
	BaseArgs []any  // arguments of Base's placeholders
}

// plan is a compiled query.
type plan struct {
	sql      string
	args     []any
	sel      []selItem // projected fields; nil means whole documents
	keys     []sortKey // effective order, id tiebreaker included
	pageSize int
	hash     string // query shape hash, bound into cursors
}

// selItem is one projected field.
type selItem struct {
	name string
	f    field
}

// sortKey is one key of the effective order.
type sortKey struct {
	f    field
	desc bool
}

// compile builds the plan; lim has its defaults.
func compile(q *Query, t Target, lim Limits) (*plan, error) {
	if t.Table == "" || strings.ContainsRune(t.Table, 0) {
		return nil, ErrBadTarget
	}
	if err := validate(q, lim); err != nil {
		return nil, err
	}
	keys, _ := sortKeys(q.Order)
	p := &plan{sel: selection(q.Select), keys: keys, pageSize: lim.pageSize(q.Limit)}
	p.hash = shapeHash(q, t.Table)
	var after []any
	if q.Cursor != "" {
		var err error
		if after, err = decodeCursor(q.Cursor, p.hash, len(keys)); err != nil {
			return nil, err
		}
	}
	p.sql, p.args = p.build(q.Where, t, after)
	return p, nil
}

// sortKeys resolves the order list and appends id as the final tiebreaker,
// in the direction of the last key, unless id is already a key.
func sortKeys(order []Order) ([]sortKey, error) {
	if len(order) > maxOrder {
		return nil, tooComplex("/order", "more than "+strconv.Itoa(maxOrder)+" keys")
	}
	keys := make([]sortKey, 0, len(order)+1)
	seen := map[field]bool{}
	for i, o := range order {
		p := ptr("/order", strconv.Itoa(i))
		f, ok := parseField(o.Field)
		if !ok {
			return nil, invalid(ptr(p, "field"), "bad field path")
		}
		if seen[f] {
			return nil, invalid(ptr(p, "field"), "duplicate order key")
		}
		if o.Direction != "" && o.Direction != "asc" && o.Direction != "desc" {
			return nil, invalid(ptr(p, "direction"), `direction must be "asc" or "desc"`)
		}
		seen[f] = true
		keys = append(keys, sortKey{f: f, desc: o.Direction == "desc"})
	}
	if id := pseudo["id"]; !seen[id] {
		desc := len(keys) > 0 && keys[len(keys)-1].desc
		keys = append(keys, sortKey{f: id, desc: desc})
	}
	return keys, nil
}

// selection resolves the select list (already validated).
func selection(sel []string) []selItem {
	if len(sel) == 0 {
		return nil
	}
	out := make([]selItem, len(sel))
	for i, s := range sel {
		f, _ := parseField(s)
		out[i] = selItem{name: s, f: f}
	}
	return out
}

// build writes the statement. The page is computed in a MATERIALIZED CTE
// and re-sorted outside it, so all of the work happens in the statement's
// first step, which the driver can interrupt when the context ends.
//
// A cursor page whose first key is a document field may have to cross the
// NULL boundary of that key (ascending from absent values into present ones,
// or descending from present values into absent ones). No single index range
// covers both sides, so the page is then built from two index-friendly
// parts: "rest", the rest of the cursor's side, and the side that follows,
// limited to the rows rest leaves free (when rest fills the page, that LIMIT
// is 0 and SQLite does not run the part at all).
func (p *plan) build(where Expr, t Target, after []any) (string, []any) {
	w := &sqlw{}
	nullSide := after != nil && after[0] == nil // the cursor's side has key 0 NULL
	var cond func()
	if after != nil {
		cond = func() { w.keyset(p.keys, after) }
	}
	if next := p.nextSide(w, after); next != nil {
		p.split(w, where, t, cond, next, nullSide)
	} else {
		w.str("WITH page AS MATERIALIZED (")
		p.core(w, where, t, cond, nullSide)
		p.limit(w)
		w.str(")")
	}
	w.str(" SELECT * FROM page")
	p.orderBy(w, true, false)
	return w.b.String(), w.args
}

// split writes the two-part page: rest (the cursor's side, cond) and the
// side that follows (next) for the rows rest leaves free.
func (p *plan) split(w *sqlw, where Expr, t Target, cond, next func(), nullSide bool) {
	w.str("WITH rest AS MATERIALIZED (")
	p.core(w, where, t, cond, nullSide)
	p.limit(w)
	w.str("), page AS MATERIALIZED (SELECT * FROM rest UNION ALL SELECT * FROM (")
	p.core(w, where, t, next, !nullSide)
	w.str(" LIMIT max(0, ")
	w.bind(int64(p.pageSize) + 1)
	w.str(" - (SELECT count(*) FROM rest))))")
}

// nextSide returns the writer of the predicate that selects the side of the
// first key's NULL boundary that follows the cursor, when the page must be
// split; nil otherwise. "Not NULL" is written as ">= -Inf" (json_extract
// values are NULL, numbers or text, and text sorts after numbers), a range
// that lets SQLite seek past the NULL entries of an index.
func (p *plan) nextSide(w *sqlw, after []any) func() {
	if after == nil || p.keys[0].f.kind != colNone {
		return nil
	}
	e := p.keys[0].f.value()
	switch k, v := p.keys[0], after[0]; {
	case !k.desc && v == nil:
		return func() { w.str(e, " >= "); w.bind(math.Inf(-1)) }
	case k.desc && v != nil:
		return func() { w.str(e, " IS NULL") }
	}
	return nil
}

// core writes SELECT ... FROM table WHERE base AND where AND <cond> ORDER BY
// ...; cond, if not nil, writes the cursor condition. When cond
// makes key 0 NULL in every row, key 0 is left out of ORDER BY: SQLite does
// not see that "k IS NULL" fixes k, and would sort instead of reading the
// (k, id) index in order.
func (p *plan) core(w *sqlw, where Expr, t Target, cond func(), keyNull bool) {
	w.str("SELECT id")
	p.columns(w)
	w.str(" FROM ", quoteIdent(t.Table))
	word := " WHERE "
	and := func() { w.str(word); word = " AND " }
	if t.Base != "" {
		and()
		w.str("(", t.Base, ")")
		w.args = append(w.args, t.BaseArgs...)
	}
	if where != nil {
		and()
		w.expr(where)
	}
	if cond != nil {
		and()
		cond()
	}
	p.orderBy(w, false, keyNull)
}

// limit writes LIMIT pageSize+1 (one more row tells whether there is a
// next page).
func (p *plan) limit(w *sqlw) {
	w.str(" LIMIT ")
	w.bind(int64(p.pageSize) + 1)
}

// orderBy writes ORDER BY the effective order, without key 0 if skipFirst:
// the key expressions, or their aliases k0.. when aliased.
func (p *plan) orderBy(w *sqlw, aliased, skipFirst bool) {
	w.str(" ORDER BY ")
	first := 0
	if skipFirst {
		first = 1
	}
	for i := first; i < len(p.keys); i++ {
		k := p.keys[i]
		w.sep(i-first, ", ")
		if aliased {
			w.str("k", strconv.Itoa(i), dir(k.desc))
		} else {
			w.str(k.f.value(), dir(k.desc))
		}
	}
}

// columns writes the projection (p0.. or the whole doc) and the keys k0...
func (p *plan) columns(w *sqlw) {
	if p.sel == nil {
		w.str(", doc AS p0")
	}
	for i, s := range p.sel {
		w.str(", ", s.f.raw(), " AS p", strconv.Itoa(i))
	}
	for i, k := range p.keys {
		w.str(", ", k.f.value(), " AS k", strconv.Itoa(i))
	}
}

func dir(desc bool) string {
	if desc {
		return " DESC"
	}
	return " ASC"
}

// quoteIdent quotes an SQL identifier.
func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// sqlw accumulates SQL text and its arguments in step.
type sqlw struct {
	b    strings.Builder
	args []any
}

func (w *sqlw) str(parts ...string) {
	for _, s := range parts {
		w.b.WriteString(s)
	}
}

// bind writes a placeholder for v.
func (w *sqlw) bind(v any) {
	w.b.WriteString("?")
	w.args = append(w.args, v)
}

// sep writes s before every element but the first.
func (w *sqlw) sep(i int, s string) {
	if i > 0 {
		w.b.WriteString(s)
	}
}
