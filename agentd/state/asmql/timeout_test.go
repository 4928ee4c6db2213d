package asmql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// bigTable fills a docs table with n documents of a fixed shape:
// status (4 values), rank (a permutation), title, body, tags.
func bigTable(tb testing.TB, db *sql.DB, n int) {
	tb.Helper()
	statuses := []string{"open", "closed", "draft", "archived"}
	docs := make([]testDoc, n)
	for i := range docs {
		docs[i] = testDoc{id: fmt.Sprintf("d%07d", i), created: int64(i), updated: int64(i), doc: map[string]any{
			"status": statuses[i%4], "rank": (i * 7919) % n, "title": fmt.Sprintf("note %d", i),
			"body": strings.Repeat("lorem ipsum dolor sit amet ", 4), "tags": []any{"a", "b", fmt.Sprint(i % 100)}}}
	}
	insertDocs(tb, db, docs)
}

// TestExec_Timeout: a query that outlives Limits.Timeout is interrupted and
// reported as QUERY_TIMEOUT; the database stays usable.
func TestExec_Timeout(t *testing.T) {
	db := openDB(t)
	bigTable(t, db, 60000)
	q := mustParse(t, `{"from":"x","where":{"$or":[{"body":{"$contains":"zzz"}},{"tags":{"$contains":"zzz"}}]},"order":[{"field":"rank"}],"limit":20}`)
	ctx := context.Background()

	full := fullRun(t, db, q)

	_, err := Exec(ctx, db, q, testTarget, Limits{Timeout: time.Millisecond})
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("1ms timeout: %v", err)
	}

	// A timeout well inside the query's run time interrupts it in SQLite:
	// the call returns long before the query would have finished.
	start := time.Now()
	_, err = Exec(ctx, db, q, testTarget, Limits{Timeout: full / 10})
	took := time.Since(start)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("timeout %v: %v", full/10, err)
	}
	if took >= full*3/4 {
		t.Errorf("not interrupted: took %v, full run %v", took, full)
	}
	t.Logf("full run %v; with timeout %v returned after %v", full, full/10, took)

	// The caller's deadline counts too; cancellation is not a timeout.
	dctx, cancel := context.WithTimeout(ctx, full/10)
	defer cancel()
	if _, err := Exec(dctx, db, q, testTarget, Limits{}); !errors.Is(err, ErrTimeout) {
		t.Errorf("caller deadline: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Exec(cctx, db, q, testTarget, Limits{}); !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
		t.Errorf("canceled: %v", err)
	}

	// An index-ordered scan whose matches are the first and the last entry:
	// SQLite finds the first row at once and the second after a full scan.
	// Exec materialises the page inside the statement's first step, the only
	// one the driver interrupts, so this is cut short too.
	if _, err := db.Exec(`CREATE INDEX docs_rank ON docs(json_extract(doc, '$.rank'), id)`); err != nil {
		t.Fatal(err)
	}
	last := 0
	for (last*7919)%60000 != 59999 {
		last++
	}
	sparse := mustParse(t, fmt.Sprintf(`{"from":"x","where":{"title":{"$in":["note 0","note %d"]}},"order":[{"field":"rank"}],"limit":5}`, last))
	full = fullRun(t, db, sparse)
	start = time.Now()
	_, err = Exec(ctx, db, sparse, testTarget, Limits{Timeout: full / 10})
	took = time.Since(start)
	if !errors.Is(err, ErrTimeout) || took >= full*3/4 {
		t.Errorf("sparse scan with timeout %v: %v after %v (full run %v)", full/10, err, took, full)
	}
	t.Logf("sparse scan: full run %v; with timeout %v returned after %v", full, full/10, took)

	res, err := Exec(ctx, db, mustParse(t, `{"from":"x","where":{"id":"d0000007"}}`), testTarget, Limits{})
	if err != nil || len(res.Rows) != 1 {
		t.Fatalf("after timeouts: %v %v", res, err)
	}
}

// fullRun returns the fastest of two untimed-out runs of q.
func fullRun(t *testing.T, db *sql.DB, q *Query) time.Duration {
	t.Helper()
	best := time.Duration(1<<63 - 1)
	for range 2 {
		start := time.Now()
		if _, err := Exec(context.Background(), db, q, testTarget, Limits{Timeout: time.Minute}); err != nil {
			t.Fatal(err)
		}
		best = min(best, time.Since(start))
	}
	return best
}
