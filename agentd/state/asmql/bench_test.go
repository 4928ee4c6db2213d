package asmql

import (
	"context"
	"database/sql"
	"slices"
	"testing"
	"time"
)

// BenchmarkExec: 100,000 documents; where + order + limit 20, first page and
// the 50th page (by cursor), with no index, with an expression index on the
// order field, and with one on (order field, id). Reports p50 and p99 per
// query. Run:
//
//	go test -tags libsecp256k1 -run '^$' -bench BenchmarkExec -benchtime 200x ./agentd/state/asmql/
func BenchmarkExec(b *testing.B) {
	db := openDB(b)
	start := time.Now()
	bigTable(b, db, 100000)
	b.Logf("inserted 100,000 documents in one transaction in %v", time.Since(start))

	desc := mustParse(b, `{"select":["title","rank"],"from":"x","where":{"status":"open"},"order":[{"field":"rank","direction":"desc"}],"limit":20}`)
	asc := mustParse(b, `{"select":["title","rank"],"from":"x","where":{"status":"open"},"order":[{"field":"rank"}],"limit":20}`)
	queries := []struct {
		name string
		q    *Query
	}{
		{"desc/page1", desc},
		{"desc/page50", pageN(b, db, desc, 50)},
		{"asc/page50", pageN(b, db, asc, 50)},
	}
	indexes := []struct{ name, ddl string }{
		{"noindex", ""},
		{"index(rank)", `CREATE INDEX bench_ix ON docs(json_extract(doc, '$.rank'))`},
		{"index(rank,id)", `CREATE INDEX bench_ix ON docs(json_extract(doc, '$.rank'), id)`},
	}
	for _, ix := range indexes {
		if _, err := db.Exec(`DROP INDEX IF EXISTS bench_ix`); err != nil {
			b.Fatal(err)
		}
		if ix.ddl != "" {
			if _, err := db.Exec(ix.ddl); err != nil {
				b.Fatal(err)
			}
		}
		for _, q := range queries {
			b.Run(ix.name+"/"+q.name, func(b *testing.B) { benchQuery(b, db, q.q) })
		}
	}
}

// pageN returns q positioned at its n-th page.
func pageN(b *testing.B, db *sql.DB, q *Query, n int) *Query {
	p := *q
	for range n - 1 {
		next, err := execPage(db, &p)
		if err != nil || next == "" {
			b.Fatalf("paging: %v", err)
		}
		p.Cursor = next
	}
	return &p
}

// benchQuery times each Exec and reports the median and the 99th percentile.
func benchQuery(b *testing.B, db *sql.DB, q *Query) {
	ctx := context.Background()
	var durs []time.Duration
	for b.Loop() {
		start := time.Now()
		res, err := Exec(ctx, db, q, testTarget, Limits{Timeout: time.Minute})
		durs = append(durs, time.Since(start))
		if err != nil || len(res.Rows) != 20 {
			b.Fatalf("%v %v", res, err)
		}
	}
	slices.Sort(durs)
	b.ReportMetric(float64(durs[len(durs)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(durs[len(durs)*99/100].Microseconds()), "p99-µs")
}
