package asmql_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"

	_ "modernc.org/sqlite"

	"github.com/agentnode/agentnode/agentd/state/asmql"
)

// A state.query handler: parse the peer's ASM-QL, run it against the
// namespace's docs table with a base predicate for the reader, page on.
func Example() {
	db, err := sql.Open("sqlite", "file:example?mode=memory&cache=shared")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	mustExec(db, `CREATE TABLE notes (id TEXT PRIMARY KEY, doc TEXT NOT NULL, schema_uri TEXT NOT NULL,
		scope TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, deleted INTEGER NOT NULL DEFAULT 0)`)
	for i, doc := range []string{
		`{"title":"standup","tags":["meeting","daily"]}`,
		`{"title":"groceries","tags":["home"]}`,
		`{"title":"retro","tags":["meeting"]}`,
	} {
		mustExec(db, `INSERT INTO notes VALUES (?, ?, 'did:nuwa:state:note#v1', 'sc:note', ?, ?, 0)`,
			fmt.Sprint("n", i), doc, i, i)
	}

	q, err := asmql.ParseLimits([]byte(`{
		"select": ["id", "title"],
		"from": "did:nuwa:state:note#v1",
		"where": {"tags": {"$contains": "meeting"}},
		"order": [{"field": "updatedAt", "direction": "desc"}],
		"limit": 1}`), asmql.Limits{})
	if err != nil {
		log.Fatal(err) // an *asmql.Error: show it to the peer as is
	}
	target := asmql.Target{Table: "notes", Base: "schema_uri = ? AND deleted = 0", BaseArgs: []any{q.From}}
	for {
		res, err := asmql.Exec(context.Background(), db, q, target, asmql.Limits{})
		if err != nil {
			log.Fatal(err)
		}
		for _, row := range res.Rows {
			fmt.Println(row["id"], row["title"])
		}
		if res.NextCursor == "" {
			break
		}
		q.Cursor = res.NextCursor
	}
	// Output:
	// n2 retro
	// n0 standup
}

func mustExec(db *sql.DB, query string, args ...any) {
	if _, err := db.Exec(query, args...); err != nil {
		log.Fatal(err)
	}
}
