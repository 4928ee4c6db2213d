package asmql

import (
	"database/sql"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// queryPlan returns SQLite's EXPLAIN QUERY PLAN lines for a compiled query.
func queryPlan(t *testing.T, db *sql.DB, q *Query) string {
	t.Helper()
	s, args, err := Compile(q, testTarget, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query("EXPLAIN QUERY PLAN "+s, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, detail)
	}
	return strings.Join(lines, "\n")
}

// TestCompile_UsesIndexes: the json_extract(doc, '$.f') form matches the
// store's expression indexes, for filters and (with id) for order + cursor.
func TestCompile_UsesIndexes(t *testing.T) {
	db := openDB(t)
	bigTable(t, db, 2000)
	for _, ddl := range []string{
		`CREATE INDEX docs_title ON docs(json_extract(doc, '$.title'))`,
		`CREATE INDEX docs_rank ON docs(json_extract(doc, '$.rank'), id)`,
		`ANALYZE`,
	} {
		if _, err := db.Exec(ddl); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct{ query, want, not string }{
		{`{"from":"x","where":{"title":"note 5"}}`, "USING INDEX docs_title (<expr>=?)", ""},
		{`{"from":"x","where":{"title":{"$in":["note 5","note 6"]}}}`, "USING INDEX docs_title (<expr>=?)", ""},
		{`{"from":"x","where":{"title":{"$gt":"note 9"}}}`, "USING INDEX docs_title (<expr>>?)", ""},
		{`{"from":"x","where":{"status":"open"},"order":[{"field":"rank","direction":"desc"}],"limit":20}`, "USING INDEX docs_rank", "TEMP B-TREE"},
		{`{"from":"x","where":{"status":"open"},"order":[{"field":"rank"}],"limit":20}`, "USING INDEX docs_rank", "TEMP B-TREE"},
	}
	for _, c := range cases {
		q := mustParse(t, c.query)
		plan := queryPlan(t, db, q)
		if !strings.Contains(plan, c.want) || (c.not != "" && strings.Contains(plan, c.not)) {
			t.Errorf("%s:\n%s\nwant %q, not %q", c.query, plan, c.want, c.not)
		}
	}
}

// TestCompile_CursorPagesSeek: with an index on (order field, id), a cursor
// page reads the index from the cursor on, including when it crosses the
// NULL boundary of a field that some documents lack; no part of it sorts
// more than the page.
func TestCompile_CursorPagesSeek(t *testing.T) {
	db := openDB(t)
	docs := make([]testDoc, 3000)
	for i := range docs {
		d := map[string]any{"status": []string{"open", "closed"}[i%2]}
		if i%10 >= 3 {
			d["rank"] = (i * 7919) % 3000
		}
		docs[i] = testDoc{id: fmt.Sprintf("d%05d", i), doc: d}
	}
	insertDocs(t, db, docs)
	if _, err := db.Exec(`CREATE INDEX docs_rank ON docs(json_extract(doc, '$.rank'), id)`); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		order string
		pages int
		want  []string
	}{
		{`[{"field":"rank"}]`, 2, []string{"(<expr>=? AND id>?)", "(<expr>>?)"}},           // in the NULL block
		{`[{"field":"rank"}]`, 50, []string{"(<expr>>?)"}},                                 // past it
		{`[{"field":"rank","direction":"desc"}]`, 2, []string{"(<expr><?)", "(<expr>=?)"}}, // NULL block follows
		{`[{"field":"rank","direction":"desc"}]`, 120, []string{"(<expr>=? AND id<?)"}},    // in it
	}
	for _, c := range cases {
		q := mustParse(t, `{"from":"x","where":{"status":"open"},"order":`+c.order+`,"limit":10}`)
		for range c.pages - 1 {
			next, err := execPage(db, q)
			if err != nil || next == "" {
				t.Fatal(next, err)
			}
			q.Cursor = next
		}
		plan := queryPlan(t, db, q)
		for _, want := range c.want {
			if !strings.Contains(plan, "SEARCH docs USING INDEX docs_rank "+want) {
				t.Errorf("%s page %d: want a seek %s in\n%s", c.order, c.pages, want, plan)
			}
		}
		if strings.Contains(plan, "SCAN docs") || regexp.MustCompile(`SEARCH docs[^\n]*\nUSE TEMP`).MatchString(plan) {
			t.Errorf("%s page %d: scans or sorts the table:\n%s", c.order, c.pages, plan)
		}
	}
}
