package pgmigrate_test

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentnode/agentnode/internal/pgmigrate"
	"github.com/agentnode/agentnode/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func pool(t *testing.T, url string) *pgxpool.Pool {
	t.Helper()
	p, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

var v2 = pgmigrate.Schema{Name: "mt", Lock: 42, Steps: []string{
	`CREATE TABLE mt_a (n integer)`,
	`CREATE TABLE mt_b (n integer); INSERT INTO mt_b VALUES (1)`,
}}

func TestSchema_Migrate_concurrentOnce(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		p := pool(t, url)
		wg.Go(func() { errs[i] = v2.Migrate(ctx, p) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := pool(t, url).QueryRow(ctx, `SELECT count(*) FROM mt_b`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("mt_b rows: got %d (%v), want 1: step 2 ran more than once", n, err)
	}
}

func TestSchema_Migrate_refusesNewer(t *testing.T) {
	ctx := context.Background()
	p := pool(t, pgtest.URL(t))
	if err := v2.Migrate(ctx, p); err != nil {
		t.Fatal(err)
	}
	v1 := v2
	v1.Steps = v2.Steps[:1]
	if err := v1.Migrate(ctx, p); !errors.Is(err, pgmigrate.ErrTooNew) {
		t.Fatalf("got %v, want ErrTooNew", err)
	}
	if err := v2.Migrate(ctx, p); err != nil {
		t.Fatalf("re-running the same version: %v", err)
	}
}
