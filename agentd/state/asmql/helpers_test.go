package asmql

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"
)

// docsDDL is the store's docs-table contract.
const docsDDL = `CREATE TABLE %s (
	id TEXT NOT NULL PRIMARY KEY,
	doc TEXT NOT NULL,
	schema_uri TEXT NOT NULL,
	scope TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	deleted INTEGER NOT NULL DEFAULT 0)`

const testSchema = "did:nuwa:state:note#v1"

// testTarget is the target tests query: live notes.
var testTarget = Target{Table: "docs", Base: "schema_uri = ? AND deleted = 0", BaseArgs: []any{testSchema}}

// openDB opens a SQLite file in a temp dir (WAL, busy timeout) with an
// empty docs table.
func openDB(tb testing.TB) *sql.DB {
	tb.Helper()
	dsn := "file:" + filepath.Join(tb.TempDir(), "state.db") +
		"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	if _, err := db.Exec(fmt.Sprintf(docsDDL, "docs")); err != nil {
		tb.Fatal(err)
	}
	return db
}

// testDoc is a row to insert.
type testDoc struct {
	id      string
	doc     map[string]any
	created int64
	updated int64
	deleted bool
}

// insertDocs inserts docs in one transaction.
func insertDocs(tb testing.TB, db *sql.DB, docs []testDoc) {
	tb.Helper()
	tx, err := db.Begin()
	if err != nil {
		tb.Fatal(err)
	}
	stmt, err := tx.Prepare(`INSERT INTO docs (id, doc, schema_uri, scope, created_at, updated_at, deleted) VALUES (?, ?, ?, 'sc:note', ?, ?, ?)`)
	if err != nil {
		tb.Fatal(err)
	}
	for _, d := range docs {
		b, err := json.Marshal(d.doc)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := stmt.Exec(d.id, string(b), testSchema, d.created, d.updated, d.deleted); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}

// mustParse parses a query or fails.
func mustParse(tb testing.TB, s string) *Query {
	tb.Helper()
	q, err := Parse([]byte(s))
	if err != nil {
		tb.Fatalf("Parse(%s): %v", s, err)
	}
	return q
}

// ids runs q and returns the ids of the page.
func ids(tb testing.TB, db *sql.DB, q *Query) []string {
	tb.Helper()
	res, err := Exec(context.Background(), db, q, testTarget, Limits{})
	if err != nil {
		sqlText, _, _ := Compile(q, testTarget, Limits{})
		tb.Fatalf("Exec: %v\n%s", err, sqlText)
	}
	out := make([]string, len(res.Rows))
	for i, r := range res.Rows {
		out[i] = r["id"].(string)
	}
	return out
}

// execPage runs q and returns its next cursor.
func execPage(db *sql.DB, q *Query) (string, error) {
	res, err := Exec(context.Background(), db, q, testTarget, Limits{})
	if err != nil {
		return "", err
	}
	return res.NextCursor, nil
}
