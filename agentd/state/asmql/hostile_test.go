package asmql

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestParse_Refuses: malformed, hostile and oversized queries are refused
// with a specific code and location.
func TestParse_Refuses(t *testing.T) {
	deep := func(open, leaf, close string, n int) string {
		return `{"from":"x","where":` + strings.Repeat(open, n) + leaf + strings.Repeat(close, n) + `}`
	}
	bigIn := `{"from":"x","where":{"a":{"$in":[` + strings.Repeat(`1,`, 1000) + `1]}}}`
	wideOr := `{"from":"x","where":{"$or":[` + strings.Repeat(`{"a":1},`, 300) + `{"a":1}]}}`
	cases := []struct {
		in, code, path string
	}{
		// injection through names: refused by the path grammar.
		{`{"from":"x","where":{"a') OR 1=1; --":1}}`, CodeInvalidQuery, "/where/a') OR 1=1; --"},
		{`{"from":"x","where":{"a.b'; DROP TABLE docs; --":1}}`, CodeInvalidQuery, "/where/a.b'; DROP TABLE docs; --"},
		{`{"from":"x","where":{"a/b~c":1}}`, CodeInvalidQuery, "/where/a~1b~0c"},
		{`{"from":"x","order":[{"field":"n","direction":"desc; DROP TABLE docs"}]}`, CodeInvalidQuery, "/order/0/direction"},
		{`{"from":"x","order":[{"field":"n DESC; DROP TABLE docs"}]}`, CodeInvalidQuery, "/order/0/field"},
		{`{"from":"x","order":[{"field":"n","direction":"DESC"}]}`, CodeInvalidQuery, "/order/0/direction"},
		{`{"from":"x","select":["title FROM docs; --"]}`, CodeInvalidQuery, "/select/0"},
		{`{"from":"x","select":["a","a"]}`, CodeInvalidQuery, "/select/1"},
		// nesting and size.
		{deep(`{"$not":`, `{"a":1}`, `}`, 10000), CodeTooComplex, ""},
		{deep(`[`, `1`, `]`, 10000), CodeTooComplex, ""},
		{deep(`{"$and":[`, `{"a":1}`, `]}`, 5000), CodeTooComplex, ""},
		{deep(`{"$not":`, `{"a":1}`, `}`, 16), CodeTooComplex, ""},
		{bigIn, CodeTooComplex, "/where/a/$in"},
		{wideOr, CodeTooComplex, ""},
		{`{"from":"x","cursor":"` + strings.Repeat("A", 300<<10) + `"}`, CodeTooComplex, ""},
		{`{"from":"x","order":[` + strings.Repeat(`{"field":"a"},`, 8) + `{"field":"b"}]}`, CodeTooComplex, "/order"},
		// limits.
		{`{"from":"x","limit":-1}`, CodeInvalidQuery, "/limit"},
		{`{"from":"x","limit":1e300}`, CodeInvalidQuery, "/limit"},
		{`{"from":"x","limit":99999999999999999999}`, CodeInvalidQuery, "/limit"},
		{`{"from":"x","limit":2.5}`, CodeInvalidQuery, "/limit"},
		{`{"from":"x","limit":"20"}`, CodeInvalidQuery, "/limit"},
		// wrong types and shapes.
		{`{"from":5}`, CodeInvalidQuery, "/from"},
		{`{"where":{}}`, CodeInvalidQuery, "/from"},
		{`{"from":"x","select":"title"}`, CodeInvalidQuery, "/select"},
		{`{"from":"x","select":[1]}`, CodeInvalidQuery, "/select/0"},
		{`{"from":"x","where":[]}`, CodeInvalidQuery, "/where"},
		{`{"from":"x","where":"a = 1"}`, CodeInvalidQuery, "/where"},
		{`{"from":"x","order":{"field":"a"}}`, CodeInvalidQuery, "/order"},
		{`{"from":"x","order":[{"field":"a","nulls":"first"}]}`, CodeInvalidQuery, "/order/0/nulls"},
		{`{"from":"x","order":[{"field":"a"},{"field":"a","direction":"desc"}]}`, CodeInvalidQuery, "/order/1/field"},
		{`{"from":"x","where":{"$and":{}}}`, CodeInvalidQuery, "/where/$and"},
		{`{"from":"x","where":{"$and":[]}}`, CodeInvalidQuery, "/where/$and"},
		{`{"from":"x","where":{"$or":[1]}}`, CodeInvalidQuery, "/where/$or/0"},
		{`{"from":"x","where":{"$not":[]}}`, CodeInvalidQuery, "/where/$not"},
		{`{"from":"x","where":{"$and":[{}]}}`, CodeInvalidQuery, "/where/$and/0"},
		{`{"from":"x","where":{"a":{"$exists":"yes"}}}`, CodeInvalidQuery, "/where/a/$exists"},
		{`{"from":"x","where":{"a":{"$gt":true}}}`, CodeInvalidQuery, "/where/a/$gt"},
		{`{"from":"x","where":{"a":{"$lte":null}}}`, CodeInvalidQuery, "/where/a/$lte"},
		{`{"from":"x","where":{"a":{"$gt":[1]}}}`, CodeInvalidQuery, "/where/a/$gt"},
		{`{"from":"x","where":{"a":{"$in":"a"}}}`, CodeInvalidQuery, "/where/a/$in"},
		{`{"from":"x","where":{"a":{"$in":[[1]]}}}`, CodeInvalidQuery, "/where/a/$in/0"},
		{`{"from":"x","where":{"a":{"$contains":[1]}}}`, CodeInvalidQuery, "/where/a/$contains"},
		{`{"from":"x","where":{"a":{"$eq":{"$gt":1}}}}`, CodeInvalidQuery, "/where/a/$eq"},
		{`{"from":"x","where":{"a":[1,2]}}`, CodeInvalidQuery, "/where/a"},
		{`{"from":"x","where":{"a":{"b":1}}}`, CodeInvalidQuery, "/where/a/b"},
		{`{"from":"x","where":{"a":{"$eq":1,"b":2}}}`, CodeInvalidQuery, "/where/a/b"},
		{`{"from":"x","where":{"a":{}}}`, CodeInvalidQuery, "/where/a"},
		{`{"from":"x","where":{"a":{"$not":1}}}`, CodeInvalidQuery, "/where/a/$not"},
		// unknown operators and keys.
		{`{"from":"x","where":{"a":{"$regex":".*"}}}`, CodeInvalidQuery, "/where/a/$regex"},
		{`{"from":"x","where":{"$where":"1=1"}}`, CodeInvalidQuery, "/where/$where"},
		{`{"from":"x","where":{"$expr":{}}}`, CodeInvalidQuery, "/where/$expr"},
		{`{"from":"x","groupBy":["a"]}`, CodeInvalidQuery, "/groupBy"},
		// JSON itself.
		{`{"from":"x","from":"y"}`, CodeInvalidQuery, "/from"},
		{`{"from":"x","where":{"a":1,"a":2}}`, CodeInvalidQuery, "/where/a"},
		{`{"from":"x"} {}`, CodeInvalidQuery, ""},
		{`{"from":"x"} x`, CodeInvalidQuery, ""},
		{`[1]`, CodeInvalidQuery, ""},
		{``, CodeInvalidQuery, ""},
		{`{"from":`, CodeInvalidQuery, "/from"},
		{`{"from":"x",}`, CodeInvalidQuery, ""},
		{`{"from":"x","where":{"a":NaN}}`, CodeInvalidQuery, "/where/a"},
		{`{"from":"x","where":{"a":1e999}}`, CodeInvalidQuery, "/where/a"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.in))
		var qe *Error
		if !errors.As(err, &qe) || qe.Code != c.code || (c.path != "" && qe.Path != c.path) {
			t.Errorf("Parse(%.80s): got %v, want %s at %q", c.in, err, c.code, c.path)
		}
	}
}

// TestParse_BadPaths: field paths outside the grammar are refused.
func TestParse_BadPaths(t *testing.T) {
	bad := []string{"", ".a", "a.", "a..b", "0", "1a", "a.01", "a.-1", "a b", "ä", "a.1e3", "a[0]", "$", "$.", "$..a",
		"a;", "a'", `a"`, "a.b-c", strings.Repeat("a", 257), strings.Repeat("a.", 32) + "a", "a.9999999999"}
	for _, p := range bad {
		if _, ok := parseField(p); ok {
			t.Errorf("parseField(%q) accepted", p)
		}
		b, _ := json.Marshal(map[string]any{"from": "x", "where": map[string]any{p: 1}})
		if _, err := Parse(b); !errors.Is(err, ErrInvalidQuery) {
			t.Errorf("Parse(where %q): %v", p, err)
		}
	}
	good := map[string]string{"a": "$.a", "a_1.B2": "$.a_1.B2", "a.0": "$.a[0]", "a.10.b": "$.a[10].b", "$.id": "$.id", "_": "$._"}
	for in, want := range good {
		if f, ok := parseField(in); !ok || f.path != want {
			t.Errorf("parseField(%q) = %+v, %v; want %s", in, f, ok, want)
		}
	}
}

// TestExec_Hostile runs injection attempts against a real table: values are
// bound, so nothing but a failed match happens, and the table survives.
func TestExec_Hostile(t *testing.T) {
	db := fixture(t)
	values := []string{
		`x'); DROP TABLE docs; --`, `' OR '1'='1`, `"; DROP TABLE docs; --`, `\'; DELETE FROM docs; --`, "\x00", `%' OR 1=1 --`,
	}
	for _, v := range values {
		for _, op := range []Op{OpEq, OpGt, OpContains, OpNe} {
			q := &Query{From: testSchema, Where: Cmp{Field: "title", Op: op, Value: v}}
			if _, err := Exec(context.Background(), db, q, testTarget, Limits{}); err != nil {
				t.Errorf("%s %q: %v", op, v, err)
			}
		}
	}
	// A hostile table name is quoted: it names a table that does not exist.
	evil := Target{Table: `docs" WHERE 1; DROP TABLE docs; --`}
	if _, err := Exec(context.Background(), db, &Query{From: "x"}, evil, Limits{}); err == nil || !strings.Contains(err.Error(), "no such table") {
		t.Errorf("hostile table: %v", err)
	}
	if _, err := Exec(context.Background(), db, &Query{From: "x"}, Target{}, Limits{}); !errors.Is(err, ErrBadTarget) {
		t.Errorf("empty table: %v", err)
	}
	// Programmatic queries are validated like parsed ones.
	bad := []*Query{
		nil,
		{From: "x", Where: Cmp{Field: "a;--", Op: OpEq, Value: 1}},
		{From: "x", Where: Cmp{Field: "a", Op: "$where", Value: "1"}},
		{From: "x", Where: Cmp{Field: "a", Op: OpEq, Value: struct{}{}}},
		{From: "x", Where: Cmp{Field: "a", Op: OpIn, Value: []string{"a"}}},
		{From: "x", Where: And{}},
		{From: "x", Where: Or{nil}},
		{From: "x", Where: Not{}},
		{From: "x", Order: []Order{{Field: "a", Direction: "up"}}},
		{From: "x", Limit: -5},
	}
	for i, q := range bad {
		if _, err := Exec(context.Background(), db, q, testTarget, Limits{}); !errors.Is(err, ErrInvalidQuery) {
			t.Errorf("bad query %d: %v", i, err)
		}
	}
	assertTableIntact(t, db, 6)
}

// assertTableIntact checks the docs table still holds n rows.
func assertTableIntact(t *testing.T, db *sql.DB, n int) {
	t.Helper()
	var got int
	if err := db.QueryRow(`SELECT count(*) FROM docs`).Scan(&got); err != nil || got != n {
		t.Fatalf("docs table: %d rows, %v; want %d", got, err, n)
	}
}

// TestExec_Limit: limits default and are capped, not refused.
func TestExec_Limit(t *testing.T) {
	db := openDB(t)
	var docs []testDoc
	for i := range 30 {
		docs = append(docs, testDoc{id: fmt.Sprintf("d%02d", i), doc: map[string]any{"i": i}})
	}
	insertDocs(t, db, docs)
	cases := []struct {
		limit int
		lim   Limits
		want  int
	}{
		{0, Limits{}, 30},
		{0, Limits{DefaultLimit: 7}, 7},
		{1 << 40, Limits{MaxLimit: 12}, 12},
		{1 << 30, Limits{}, 30},
		{20, Limits{MaxRows: 5}, 5},
		{3, Limits{}, 3},
	}
	for _, c := range cases {
		res, err := Exec(context.Background(), db, &Query{From: "x", Limit: c.limit}, testTarget, c.lim)
		if err != nil || len(res.Rows) != c.want || (res.NextCursor != "") != (c.want < 30) {
			t.Errorf("limit %d %+v: %d rows, next %q, %v; want %d", c.limit, c.lim, len(res.Rows), res.NextCursor, err, c.want)
		}
	}
	q := mustParse(t, `{"from":"x","limit":1000000000000}`)
	if res, err := Exec(context.Background(), db, q, testTarget, Limits{MaxLimit: 10}); err != nil || len(res.Rows) != 10 {
		t.Errorf("huge parsed limit: %v", err)
	}
}

// TestExec_BadCursor: cursors are bound to the query shape and table, and
// tampering is refused.
func TestExec_BadCursor(t *testing.T) {
	db := fixture(t)
	q := mustParse(t, `{"from":"x","where":{"n":{"$exists":true}},"order":[{"field":"n"}],"limit":2}`)
	res, err := Exec(context.Background(), db, q, testTarget, Limits{})
	if err != nil || res.NextCursor == "" {
		t.Fatal(res, err)
	}
	good := res.NextCursor
	raw, _ := base64.RawURLEncoding.DecodeString(good)
	var c map[string]any
	json.Unmarshal(raw, &c)
	reencode := func(edit func(map[string]any)) string {
		m := map[string]any{}
		json.Unmarshal(raw, &m)
		edit(m)
		b, _ := json.Marshal(m)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	tampered := map[string]string{
		"garbage":     "!!!not base64!!!",
		"padded":      good + "==",
		"not json":    base64.RawURLEncoding.EncodeToString([]byte("hello")),
		"trailing":    base64.RawURLEncoding.EncodeToString(append(raw, []byte(" {}")...)),
		"other hash":  reencode(func(m map[string]any) { m["h"] = "AAAAAAAAAAAAAAAA" }),
		"version":     reencode(func(m map[string]any) { m["v"] = 2 }),
		"extra field": reencode(func(m map[string]any) { m["x"] = 1 }),
		"few keys":    reencode(func(m map[string]any) { m["k"] = []any{1} }),
		"many keys":   reencode(func(m map[string]any) { m["k"] = []any{1, "a", "b"} }),
		"bool key":    reencode(func(m map[string]any) { m["k"] = []any{true, "n2"} }),
		"float key":   reencode(func(m map[string]any) { m["k"] = []any{1.5, "n2"} }),
		"nan key":     reencode(func(m map[string]any) { m["k"] = []any{map[string]any{"f": "NaN"}, "n2"} }),
		"obj key":     reencode(func(m map[string]any) { m["k"] = []any{map[string]any{"g": "1"}, "n2"} }),
		"array key":   reencode(func(m map[string]any) { m["k"] = []any{[]any{1}, "n2"} }),
	}
	for name, cur := range tampered {
		q2 := *q
		q2.Cursor = cur
		if _, err := Exec(context.Background(), db, &q2, testTarget, Limits{}); !errors.Is(err, ErrBadCursor) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The same cursor on another query shape or table is refused ...
	others := []func(*Query){
		func(q *Query) { q.Where = Cmp{Field: "n", Op: OpExists, Value: false} },
		func(q *Query) { q.Order[0].Direction = "desc" },
		func(q *Query) { q.From = "y" },
	}
	for i, edit := range others {
		q2 := *q
		q2.Order = append([]Order(nil), q.Order...)
		q2.Cursor = good
		edit(&q2)
		if _, err := Exec(context.Background(), db, &q2, testTarget, Limits{}); !errors.Is(err, ErrBadCursor) {
			t.Errorf("other shape %d: %v", i, err)
		}
	}
	q2 := *q
	q2.Cursor = good
	if _, err := Exec(context.Background(), db, &q2, Target{Table: "other"}, Limits{}); !errors.Is(err, ErrBadCursor) {
		t.Errorf("other table: %v", err)
	}
	// ... while limit and select may change between pages.
	q2.Limit, q2.Select = 10, []string{"n"}
	if _, err := Exec(context.Background(), db, &q2, testTarget, Limits{}); err != nil {
		t.Errorf("new limit and select: %v", err)
	}
	assertTableIntact(t, db, 6)
}

// TestError_Is: coded errors compare by code and render without internals.
func TestError_Is(t *testing.T) {
	_, err := Parse([]byte(`{"from":"x","where":{"a":{"$regex":"x"}}}`))
	if !errors.Is(err, ErrInvalidQuery) || errors.Is(err, ErrBadCursor) {
		t.Fatalf("Is: %v", err)
	}
	if got, want := err.Error(), "INVALID_QUERY at /where/a/$regex: unknown operator"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
