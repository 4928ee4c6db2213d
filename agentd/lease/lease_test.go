package lease_test

import (
	"context"
	"errors"
	"fmt"
	neturl "net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentnode/agentnode/agentd/lease"
	"github.com/agentnode/agentnode/internal/pgtest"
	"github.com/agentnode/agentnode/internal/testkit"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// open returns a Manager named name on url.
func open(t testing.TB, url, name string, ttl time.Duration) *lease.Manager {
	t.Helper()
	m, err := lease.Open(context.Background(), url, lease.Config{Instance: name, TTL: ttl, Interval: ttl / 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

func addAgents(t testing.TB, m *lease.Manager, n int) []string {
	t.Helper()
	var agents []string
	for i := range n {
		a := fmt.Sprintf("agent-%02d", i)
		if err := m.Add(context.Background(), a); err != nil {
			t.Fatal(err)
		}
		agents = append(agents, a)
	}
	return agents
}

// waitHeld reads c until want agents are held (per the changes seen), or
// fails after a generous deadline. It returns the leases in the order got.
func waitHeld(t testing.TB, c <-chan lease.Change, want int) map[string]lease.Lease {
	t.Helper()
	got := map[string]lease.Lease{}
	deadline := time.After(30 * time.Second)
	for len(got) < want {
		select {
		case ch, ok := <-c:
			if !ok {
				t.Fatalf("changes closed with %d of %d held", len(got), want)
			}
			if ch.Held {
				got[ch.Lease.Agent] = ch.Lease
			} else {
				delete(got, ch.Lease.Agent)
			}
		case <-deadline:
			t.Fatalf("%d of %d leases held after 30s", len(got), want)
		}
	}
	return got
}

func TestManager_takeoverAfterDeath(t *testing.T) {
	url := pgtest.URL(t)
	a := open(t, url, "a", 400*time.Millisecond)
	b := open(t, url, "b", 400*time.Millisecond)
	agents := addAgents(t, a, 4)

	ctxA, killA := context.WithCancel(context.Background())
	doneA := make(chan struct{})
	go func() { a.Run(ctxA); close(doneA) }()
	heldA := waitHeld(t, a.Changes(), len(agents))

	ctxB, stopB := context.WithCancel(context.Background())
	defer stopB()
	go b.Run(ctxB)
	killA() // no release: to the database, a died
	<-doneA

	heldB := waitHeld(t, b.Changes(), len(agents))
	for _, ag := range agents {
		la, lb := heldA[ag], heldB[ag]
		last, err := b.Get(context.Background(), ag)
		if err != nil {
			t.Fatal(err)
		}
		if lb.Holder != "b" || last.Holder != "b" {
			t.Errorf("%s: holder %q, want b", ag, lb.Holder)
		}
		if lb.Epoch <= la.Epoch {
			t.Errorf("%s: b's epoch %d not above a's %d", ag, lb.Epoch, la.Epoch)
		}
		// b took it only once a's lease had expired (the last renewal's
		// expiry is at least la.Expires).
		if lb.Acquired.Before(la.Expires) {
			t.Errorf("%s: b acquired at %s, before a's lease expired at %s", ag, lb.Acquired, la.Expires)
		}
	}
}

func TestManager_acquireOneWinner(t *testing.T) {
	url := pgtest.URL(t)
	const n = 8
	ms := make([]*lease.Manager, n)
	for i := range ms {
		ms[i] = open(t, url, fmt.Sprint("m", i), time.Minute)
	}
	if err := ms[0].Add(context.Background(), "x"); err != nil {
		t.Fatal(err)
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, m := range ms {
		wg.Go(func() {
			<-start
			_, errs[i] = m.Acquire(context.Background(), "x")
		})
	}
	close(start)
	wg.Wait()
	testkit.OneWinner(t, errs, lease.ErrHeld)
}

// TestManager_runConcurrent: two Runs over many agents split them with no
// agent held by both.
func TestManager_runConcurrent(t *testing.T) {
	url := pgtest.URL(t)
	a := open(t, url, "a", time.Minute)
	b := open(t, url, "b", time.Minute)
	agents := addAgents(t, a, 40)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for _, m := range []*lease.Manager{a, b} {
		wg.Go(func() { m.Tick(ctx) })
	}
	wg.Wait()
	seen := map[string]string{}
	for _, m := range []*lease.Manager{a, b} {
		for _, l := range m.Held() {
			if other, dup := seen[l.Agent]; dup {
				t.Errorf("%s held by %s and %s", l.Agent, other, m.Instance())
			}
			seen[l.Agent] = m.Instance()
		}
	}
	if len(seen) != len(agents) {
		t.Fatalf("%d agents held, want %d", len(seen), len(agents))
	}
}

func TestFence_staleHolder(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	a := open(t, url, "a", 50*time.Millisecond)
	b := open(t, url, "b", time.Minute)
	a.Add(ctx, "x")
	la, err := a.Acquire(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	var lb lease.Lease
	for deadline := time.Now().Add(30 * time.Second); ; { // until a's lease expires
		if lb, err = b.Acquire(ctx, "x"); err == nil {
			break
		}
		if !errors.Is(err, lease.ErrHeld) || time.Now().After(deadline) {
			t.Fatalf("b acquire: %v", err)
		}
	}
	if lb.Epoch <= la.Epoch {
		t.Fatalf("epoch %d after %d: not monotonic", lb.Epoch, la.Epoch)
	}
	if _, err := a.Renew(ctx, la); !errors.Is(err, lease.ErrLost) {
		t.Errorf("stale renew: %v, want ErrLost", err)
	}
	if err := a.Release(ctx, la); !errors.Is(err, lease.ErrLost) {
		t.Errorf("stale release: %v, want ErrLost", err)
	}
	pool := pgPool(t, url)
	if err := fenced(ctx, pool, la); !errors.Is(err, lease.ErrLost) {
		t.Errorf("stale fence: %v, want ErrLost", err)
	}
	if err := fenced(ctx, pool, lb); err != nil {
		t.Errorf("holder's fence: %v", err)
	}
	if _, err := b.Renew(ctx, lb); err != nil {
		t.Errorf("holder's renew: %v", err)
	}
}

// TestFence_takeoverWaitsForWrite: a fenced transaction still open holds
// off the takeover until it commits.
func TestFence_takeoverWaitsForWrite(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	a := open(t, url, "a", time.Millisecond)
	b := open(t, url, "b", time.Minute)
	a.Add(ctx, "x")
	la, err := a.Acquire(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	pool := pgPool(t, url)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := lease.Fence(ctx, tx, la); err != nil { // expired but not taken: still a's
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { _, err := b.Acquire(ctx, "x"); got <- err }()
	waitLockWait(t, pool) // b's UPDATE is queued behind the share lock
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("b acquire after the fenced commit: %v", err)
	}
}

// waitLockWait polls until some backend waits on a lock.
func waitLockWait(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		var n int
		if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(5 * time.Millisecond) // polling interval, not synchronisation
	}
	t.Fatal("no backend waited on the lease row")
}

func fenced(ctx context.Context, pool *pgxpool.Pool, l lease.Lease) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return lease.Fence(ctx, tx, l) })
}

func pgPool(t testing.TB, url string) *pgxpool.Pool {
	t.Helper()
	p, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// TestManager_reportsLoss: a lease taken from under Run (here: removed) is
// reported lost at the next tick; ReleaseAll hands the rest over at once.
func TestManager_reportsLoss(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	a := open(t, url, "a", time.Minute)
	b := open(t, url, "b", time.Minute)
	addAgents(t, a, 2)
	if err := a.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	waitHeld(t, a.Changes(), 2)
	if err := b.Remove(ctx, "agent-00"); err != nil {
		t.Fatal(err)
	}
	if err := a.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if c := <-a.Changes(); c.Held || c.Lease.Agent != "agent-00" {
		t.Fatalf("got %+v, want agent-00 lost", c)
	}
	if err := a.ReleaseAll(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if c := <-b.Changes(); !c.Held || c.Lease.Agent != "agent-01" || c.Lease.Holder != "b" {
		t.Fatalf("got %+v, want agent-01 held by b", c)
	}
}

func TestManager_maxHeld(t *testing.T) {
	ctx := context.Background()
	m, err := lease.Open(ctx, pgtest.URL(t), lease.Config{Instance: "a", MaxHeld: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	addAgents(t, m, 5)
	m.Tick(ctx)
	m.Tick(ctx)
	if n := len(m.Held()); n != 3 {
		t.Fatalf("held %d, want 3", n)
	}
}

func TestOpen_refusesNewerSchema(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	open(t, url, "a", time.Minute)
	if _, err := pgPool(t, url).Exec(ctx, `INSERT INTO agent_lease_schema VALUES ($1)`, lease.SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	if _, err := lease.Open(ctx, url, lease.Config{}); !errors.Is(err, lease.ErrSchemaTooNew) {
		t.Fatalf("got %v, want ErrSchemaTooNew", err)
	}
}

// TestManager_lossWhenDatabaseGone: with the database unreachable, Run
// reports its leases lost once their local deadline comes near (another
// instance may hold them by then), and not before. The deadline is on an
// injected clock: the test moves it instead of waiting for it.
func TestManager_lossWhenDatabaseGone(t *testing.T) {
	ctx := context.Background()
	clk := testkit.NewClock(time.Now())
	const ttl, interval = time.Minute, 10 * time.Second
	m, err := lease.Open(ctx, pgtest.URL(t), lease.Config{Instance: "a", TTL: ttl, Interval: interval, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	addAgents(t, m, 1)
	if err := m.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	waitHeld(t, m.Changes(), 1)
	m.Close() // every query fails from now on
	clk.Advance(ttl - 2*interval - time.Second)
	if err := m.Tick(ctx); err == nil {
		t.Fatal("Tick succeeded on a closed pool")
	}
	if len(m.Held()) != 1 {
		t.Fatal("lease reported lost while the next tick could still renew it")
	}
	clk.Advance(time.Second)
	if err := m.Tick(ctx); err == nil {
		t.Fatal("Tick succeeded on a closed pool")
	}
	if len(m.Held()) != 0 {
		t.Fatal("lease still held when the next tick could no longer renew it in time")
	}
	if c := <-m.Changes(); c.Held || c.Lease.Agent != "agent-00" {
		t.Fatalf("got %+v, want agent-00 lost", c)
	}
}

// TestManager_slowDatabase: a database that answers each round trip later
// than Interval (a starved CPU, a slow link) while the leases are far from
// expiry fails no tick and loses no lease.
func TestManager_slowDatabase(t *testing.T) {
	ctx := context.Background()
	const ttl, interval, delay = time.Minute, 20 * time.Millisecond, 50 * time.Millisecond
	url := slowURL(t, pgtest.URL(t), delay)
	m, err := lease.Open(ctx, url, lease.Config{Instance: "a", TTL: ttl, Interval: interval})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	addAgents(t, m, 2)
	for i := range 3 {
		if err := m.Tick(ctx); err != nil {
			t.Fatalf("tick %d: %v", i, err)
		}
	}
	if got := waitHeld(t, m.Changes(), 2); len(got) != 2 || len(m.Held()) != 2 {
		t.Fatalf("held %v, want both agents", m.Held())
	}
}

// slowURL is url reached through a testkit.SlowLink of delay.
func slowURL(t *testing.T, raw string, delay time.Duration) string {
	t.Helper()
	u, err := neturl.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = testkit.SlowLink(t, u.Host, delay)
	return u.String()
}

// TestManager_Get_free: Get reads a free row (never held, or released),
// whose expiry is -infinity in the database, as free and expired.
func TestManager_Get_free(t *testing.T) {
	ctx := context.Background()
	m := open(t, pgtest.URL(t), "a", time.Second)
	agent := addAgents(t, m, 1)[0]
	for _, when := range []string{"never held", "released"} {
		got, err := m.Get(ctx, agent)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if got.Holder != "" || !got.Expires.Before(time.Now()) {
			t.Fatalf("%s: %+v, want free and expired", when, got)
		}
		l, err := m.Acquire(ctx, agent)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Release(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
}
