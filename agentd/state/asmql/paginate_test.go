package asmql

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// TestExec_PaginateUnderWrites pages through a table with random page sizes
// while rows are inserted and other rows updated, both between pages and
// from a concurrent writer. Every row that matched at the start appears
// exactly once, nothing repeats, and the concatenated pages are in order.
func TestExec_PaginateUnderWrites(t *testing.T) {
	orders := []string{
		`[{"field":"score","direction":"desc"},{"field":"name"}]`,
		`[{"field":"score"}]`,
		`[{"field":"name","direction":"desc"},{"field":"score","direction":"desc"}]`,
		`[{"field":"createdAt","direction":"desc"}]`,
		`[]`,
	}
	for i, order := range orders {
		t.Run(fmt.Sprint(i), func(t *testing.T) { paginate(t, order, uint64(i), false) })
		t.Run(fmt.Sprint(i, "/indexed"), func(t *testing.T) { paginate(t, order, uint64(i), true) })
	}
}

// pagedDoc is a document of the pagination test: grp decides membership,
// score and name are order keys (score may be absent or null), payload is
// what updates change.
func pagedDoc(r *rand.Rand, grp int) map[string]any {
	d := map[string]any{"grp": grp, "name": fmt.Sprintf("n%02d", r.IntN(30)), "payload": r.Int()}
	switch r.IntN(10) {
	case 0: // absent
	case 1:
		d["score"] = nil
	default:
		d["score"] = r.IntN(40)
	}
	return d
}

func paginate(t *testing.T, order string, seed uint64, indexed bool) {
	db := openDB(t)
	if indexed {
		for _, ddl := range []string{
			`CREATE INDEX ix_score ON docs(json_extract(doc, '$.score'), id)`,
			`CREATE INDEX ix_name ON docs(json_extract(doc, '$.name'), id)`,
			`CREATE INDEX ix_created ON docs(created_at, id)`,
		} {
			if _, err := db.Exec(ddl); err != nil {
				t.Fatal(err)
			}
		}
	}
	r := rand.New(rand.NewPCG(seed, 99))
	var docs []testDoc
	initial := map[string]bool{}
	for i := range 2000 {
		id := fmt.Sprintf("d%05d", i)
		docs = append(docs, testDoc{id: id, doc: pagedDoc(r, r.IntN(4)), created: int64(r.IntN(500))})
	}
	insertDocs(t, db, docs)
	for _, d := range docs {
		if d.doc["grp"].(int) < 2 {
			initial[d.id] = true
		}
	}
	w := &writer{db: db, r: rand.New(rand.NewPCG(seed, 7)), next: 100000}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { w.loop(ctx, t) })
	defer func() { cancel(); wg.Wait() }()

	q := mustParse(t, `{"select":["score","name","createdAt"],"from":"x","where":{"grp":{"$in":[0,1]}},"order":`+order+`}`)
	seen := map[string]bool{}
	var prev map[string]any
	for pages := 0; ; pages++ {
		q.Limit = 1 + r.IntN(60)
		res, err := Exec(ctx, db, q, testTarget, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range res.Rows {
			id := row["id"].(string)
			if seen[id] {
				t.Fatalf("page %d: %s repeated", pages, id)
			}
			seen[id] = true
			if prev != nil && compareRows(q, prev, row) > 0 {
				t.Fatalf("page %d: %v sorts before %v", pages, row, prev)
			}
			prev = row
		}
		if res.NextCursor == "" {
			break
		}
		q.Cursor = res.NextCursor
		w.step(t, 5) // writes between pages
	}
	for id := range initial {
		if !seen[id] {
			t.Errorf("%s matched at the start and was never returned", id)
		}
	}
	t.Logf("%d initial rows, %d returned, %d rows written concurrently", len(initial), len(seen), w.count())
}

// compareRows compares two result rows in the query's effective order.
func compareRows(q *Query, a, b map[string]any) int {
	keys, _ := sortKeys(q.Order)
	for _, k := range keys {
		name := orderName(k)
		if k.f.kind == colNone {
			name = name[2:] // drop "$."
		}
		c := rowKey(a[name]).compare(rowKey(b[name]))
		if k.desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// rowKey maps a projected value to the oracle's sort key.
func rowKey(v any) okey {
	switch x := v.(type) {
	case json.Number:
		f, _ := x.Float64()
		return okey{class: 1, num: f}
	case int64:
		return okey{class: 1, num: float64(x)}
	case string:
		return okey{class: 2, str: x}
	}
	return okey{}
}

// writer inserts rows (matching or not) and updates rows without touching
// their membership or order keys: payload of any row, grp of non-matching
// rows among the non-matching groups, and updated_at.
type writer struct {
	db   *sql.DB
	mu   sync.Mutex
	r    *rand.Rand
	next int
	n    int
}

// loop writes until ctx ends or it has written maxConcurrentWrites rows
// (an unbounded writer could keep adding rows behind the reader forever).
func (w *writer) loop(ctx context.Context, t *testing.T) {
	for ctx.Err() == nil && w.count() < maxConcurrentWrites {
		w.step(t, 1)
	}
}

// step performs n random writes.
func (w *writer) step(t *testing.T, n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for range n {
		var err error
		switch w.r.IntN(3) {
		case 0:
			w.next++
			b, _ := json.Marshal(pagedDoc(w.r, w.r.IntN(4)))
			_, err = w.db.Exec(`INSERT INTO docs (id, doc, schema_uri, scope, created_at, updated_at) VALUES (?, ?, ?, 'sc:note', ?, 0)`,
				fmt.Sprintf("d%05d", w.next), string(b), testSchema, w.r.IntN(500))
		case 1:
			_, err = w.db.Exec(`UPDATE docs SET doc = json_set(doc, '$.payload', ?), updated_at = updated_at + 1 WHERE id = ?`,
				w.r.Int(), fmt.Sprintf("d%05d", w.r.IntN(2000)))
		default:
			_, err = w.db.Exec(`UPDATE docs SET doc = json_set(doc, '$.grp', 5 - json_extract(doc, '$.grp')) WHERE id = ? AND json_extract(doc, '$.grp') >= 2`,
				fmt.Sprintf("d%05d", w.r.IntN(2000)))
		}
		if err != nil {
			t.Error(err)
			return
		}
		w.n++
	}
}

const maxConcurrentWrites = 3000

func (w *writer) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}
