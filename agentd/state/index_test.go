package state_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/agentd/state/asmql"
)

// TestIndexes_UsedByQueries checks that the expression indexes the store
// makes match what ASM-QL compiles, so SQLite plans with them.
func TestIndexes_UsedByQueries(t *testing.T) {
	ctx := context.Background()
	rt := openRuntime(t, "", state.Options{})
	c := caller(agentA1, owner1, capNote)
	for i := range 50 {
		must[*state.Document](t)(rt.Create(ctx, c, noteURI, note(fmt.Sprintf("00000000-0000-4000-8000-%012d", i), fmt.Sprint("title ", i), "b")))
	}
	rt.Store().DB().ExecContext(ctx, "ANALYZE")
	q, err := asmql.ParseLimits([]byte(fmt.Sprintf(`{"from":%q,"where":{"title":"title 7"}}`, noteURI)), asmql.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	ex := &explainer{db: rt.Store().DB()}
	asmql.Exec(ctx, ex, q, asmql.Target{Table: "cap_note_docs", Base: "schema_uri = ? AND deleted = 0", BaseArgs: []any{noteURI}}, asmql.Limits{})
	if ex.err != nil {
		t.Fatal(ex.err)
	}
	plan, sqlText := ex.plan, ex.sql
	if got := strings.Join(plan, "; "); !strings.Contains(got, "cap_note_ixo_") {
		t.Fatalf("plan does not use an expression index: %s\n%s", got, sqlText)
	}
}

// explainer is an asmql.Querier that records the plan SQLite makes for the
// statement Exec runs (and answers the statement itself).
type explainer struct {
	db   *sql.DB
	sql  string
	plan []string
	err  error
}

func (e *explainer) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	e.sql = query
	rows, err := e.db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		e.err = err
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if e.err = rows.Scan(&id, &parent, &unused, &detail); e.err != nil {
			return nil, e.err
		}
		e.plan = append(e.plan, detail)
	}
	if e.err = rows.Err(); e.err != nil {
		return nil, e.err
	}
	return e.db.QueryContext(ctx, query, args...)
}
