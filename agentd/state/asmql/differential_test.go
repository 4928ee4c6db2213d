package asmql

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// gen makes random documents and queries over a small vocabulary, so that
// equalities, ties, type mismatches and absent fields are all common.
type gen struct{ r *rand.Rand }

var (
	genNums    = []any{-3.0, -1.0, 0.0, 1.0, 1.5, 2.0, 2.5, 10.0, 100.0}
	genStrs    = []any{"", "a", "ab", "abc", "b", "ba", "B", "1", "10", "true", "null", "<x>", "é"}
	genFields  = []string{"a", "b", "s", "tags", "tags.0", "tags.1", "n", "n.x", "n.y", "n.y.0", "id", "createdAt", "updatedAt", "missing", "$.id", "a.b"}
	genOrderBy = []string{"a", "b", "s", "n.x", "tags", "n", "createdAt", "updatedAt", "id", "missing", "tags.0"}
	genOps     = []Op{OpEq, OpNe, OpGt, OpGte, OpLt, OpLte, OpIn, OpNin, OpExists, OpContains}
)

func (g gen) pick(xs []any) any { return xs[g.r.IntN(len(xs))] }

// scalar draws any JSON scalar.
func (g gen) scalar() any {
	switch g.r.IntN(8) {
	case 0:
		return nil
	case 1:
		return g.r.IntN(2) == 0
	case 2, 3, 4:
		return g.pick(genNums)
	}
	return g.pick(genStrs)
}

// value draws a document value: mostly scalars, sometimes arrays/objects.
func (g gen) value(depth int) any {
	switch n := g.r.IntN(10); {
	case n == 0 && depth < 2:
		a := make([]any, g.r.IntN(4))
		for i := range a {
			a[i] = g.value(depth + 1)
		}
		return a
	case n == 1 && depth < 2:
		return map[string]any{"x": g.scalar(), "y": []any{g.scalar()}}
	}
	return g.scalar()
}

// doc draws a document; each field may be absent.
func (g gen) doc(id string) map[string]any {
	d := map[string]any{}
	put := func(k string, v func() any) {
		if g.r.IntN(5) > 0 {
			d[k] = v()
		}
	}
	put("a", func() any { return g.value(0) })
	put("b", func() any { return g.value(0) })
	put("s", func() any { return g.pick(genStrs) })
	put("tags", func() any {
		if g.r.IntN(6) == 0 {
			return g.value(1)
		}
		a := make([]any, g.r.IntN(4))
		for i := range a {
			a[i] = g.scalar()
		}
		return a
	})
	put("n", func() any {
		if g.r.IntN(4) == 0 {
			return g.scalar()
		}
		return map[string]any{"x": g.value(1), "y": []any{g.scalar(), g.scalar()}}
	})
	if g.r.IntN(4) == 0 {
		d["id"] = id
	}
	return d
}

// expr draws a where-expression.
func (g gen) expr(depth int) Expr {
	if depth >= 4 || g.r.IntN(3) > 0 {
		return g.cmp()
	}
	switch g.r.IntN(3) {
	case 0:
		return And(g.exprs(depth))
	case 1:
		return Or(g.exprs(depth))
	}
	return Not{X: g.expr(depth + 1)}
}

func (g gen) exprs(depth int) []Expr {
	es := make([]Expr, 1+g.r.IntN(3))
	for i := range es {
		es[i] = g.expr(depth + 1)
	}
	return es
}

// cmp draws a comparison with an operand of a legal type.
func (g gen) cmp() Cmp {
	c := Cmp{Field: genFields[g.r.IntN(len(genFields))], Op: genOps[g.r.IntN(len(genOps))]}
	switch c.Op {
	case OpGt, OpGte, OpLt, OpLte:
		if g.r.IntN(2) == 0 {
			c.Value = g.pick(genNums)
		} else {
			c.Value = g.pick(genStrs)
		}
	case OpIn, OpNin:
		list := make([]any, g.r.IntN(4))
		for i := range list {
			list[i] = g.scalar()
		}
		c.Value = list
	case OpExists:
		c.Value = g.r.IntN(2) == 0
	default:
		c.Value = g.scalar()
	}
	if _, scalarOp := c.Value.(string); scalarOp && c.Field == "id" && g.r.IntN(2) == 0 {
		c.Value = fmt.Sprintf("d%03d", g.r.IntN(40))
	}
	return c
}

// query draws a query.
func (g gen) query() *Query {
	q := &Query{From: testSchema, Limit: g.r.IntN(26)}
	if g.r.IntN(6) > 0 {
		q.Where = g.expr(0)
	}
	perm := g.r.Perm(len(genOrderBy))
	for _, i := range perm[:g.r.IntN(4)] {
		q.Order = append(q.Order, Order{Field: genOrderBy[i], Direction: []string{"", "asc", "desc"}[g.r.IntN(3)]})
	}
	return q
}

// seedRandom inserts n random documents (some deleted) and returns the live ones.
func seedRandom(t *testing.T, db *sql.DB, g gen, n int) []orow {
	var docs []testDoc
	var live []orow
	for i := range n {
		id := fmt.Sprintf("d%03d", i)
		d := testDoc{id: id, doc: g.doc(id), created: int64(g.r.IntN(20)), updated: int64(g.r.IntN(20)), deleted: g.r.IntN(15) == 0}
		docs = append(docs, d)
		if !d.deleted {
			live = append(live, orow{id: id, doc: d.doc, created: d.created, updated: d.updated})
		}
	}
	insertDocs(t, db, docs)
	return live
}

// TestExec_Differential runs random queries through SQLite and the oracle:
// first pages must be equal, and so must the concatenation of all pages
// read with random page sizes.
// The second half runs with expression indexes, which change the plans
// (index order, seeks, MULTI-INDEX OR) but must not change the results.
func TestExec_Differential(t *testing.T) {
	db := openDB(t)
	g := gen{rand.New(rand.NewPCG(7, 11))}
	rows := seedRandom(t, db, g, 300)
	differential(t, db, g, rows, 600)
	for _, ddl := range []string{
		`CREATE INDEX ix_a ON docs(json_extract(doc, '$.a'), id)`,
		`CREATE INDEX ix_s ON docs(json_extract(doc, '$.s'))`,
		`CREATE INDEX ix_nx ON docs(json_extract(doc, '$.n.x'), id)`,
		`CREATE INDEX ix_tags ON docs(json_extract(doc, '$.tags'), id)`,
		`CREATE INDEX ix_created ON docs(created_at, id)`,
	} {
		if _, err := db.Exec(ddl); err != nil {
			t.Fatal(err)
		}
	}
	differential(t, db, g, rows, 600)
}

// differential runs n random queries and compares SQLite with the oracle.
func differential(t *testing.T, db *sql.DB, g gen, rows []orow, n int) {
	var nonEmpty, pages int
	start := time.Now()
	for i := range n {
		q := g.query()
		want := oquery(q, rows)
		if len(want) > 0 && len(want) < len(rows) {
			nonEmpty++
		}
		checkRoundTrip(t, q)
		got, next := page(t, db, q)
		n := min(Limits{}.withDefaults().pageSize(q.Limit), len(want))
		if !slices.Equal(got, want[:n]) || (next != "") != (len(want) > n) {
			b, _ := q.MarshalJSON()
			t.Fatalf("query %d %s\n got %v next=%q\nwant %v", i, b, got, next, want[:n])
		}
		all := got
		for next != "" {
			q.Cursor, q.Limit = next, 1+g.r.IntN(40)
			got, next = page(t, db, q)
			all = append(all, got...)
			pages++
		}
		if !slices.Equal(all, want) {
			b, _ := q.MarshalJSON()
			t.Fatalf("query %d %s: paged\n got %v\nwant %v", i, b, all, want)
		}
	}
	t.Logf("%v: %d queries selective (neither none nor all), %d continuation pages", time.Since(start), nonEmpty, pages)
}

// page runs one page and returns its ids and next cursor.
func page(t *testing.T, db *sql.DB, q *Query) ([]string, string) {
	t.Helper()
	res, err := Exec(context.Background(), db, q, testTarget, Limits{})
	if err != nil {
		b, _ := q.MarshalJSON()
		s, _, _ := Compile(q, testTarget, Limits{})
		t.Fatalf("Exec(%s): %v\n%s", b, err, s)
	}
	out := make([]string, len(res.Rows))
	for i, r := range res.Rows {
		out[i] = r["id"].(string)
	}
	return out, res.NextCursor
}

// checkRoundTrip: MarshalJSON then Parse gives a query that compiles to the
// same SQL and arguments.
func checkRoundTrip(t *testing.T, q *Query) {
	t.Helper()
	b, err := q.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	q2, err := Parse(b)
	if err != nil {
		t.Fatalf("Parse(MarshalJSON) %s: %v", b, err)
	}
	s1, a1, err1 := Compile(q, testTarget, Limits{})
	s2, a2, err2 := Compile(q2, testTarget, Limits{})
	if err1 != nil || err2 != nil || s1 != s2 || fmt.Sprint(a1) != fmt.Sprint(a2) {
		t.Fatalf("round trip %s:\n%s %v %v\n%s %v %v", b, s1, a1, err1, s2, a2, err2)
	}
}
