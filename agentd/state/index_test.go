package state_test

import (
	"context"
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
	q, err := asmql.Parse([]byte(fmt.Sprintf(`{"from":%q,"where":{"title":"title 7"}}`, noteURI)))
	if err != nil {
		t.Fatal(err)
	}
	sqlText, args, err := asmql.Compile(q, asmql.Target{Table: "cap_note_docs", Base: "schema_uri = ? AND deleted = 0", BaseArgs: []any{noteURI}}, asmql.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := rt.Store().DB().QueryContext(ctx, "EXPLAIN QUERY PLAN "+sqlText, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		rows.Scan(&id, &parent, &unused, &detail)
		plan = append(plan, detail)
	}
	if got := strings.Join(plan, "; "); !strings.Contains(got, "cap_note_ixo_") {
		t.Fatalf("plan does not use an expression index: %s\n%s", got, sqlText)
	}
}
