package agentpg_test

import (
	"context"
	neturl "net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentnode/agentnode/agentd/agentpg"
	"github.com/agentnode/agentnode/agentd/consent"
	"github.com/agentnode/agentnode/agentd/recordstest"
	"github.com/agentnode/agentnode/agentd/tasks"
	"github.com/agentnode/agentnode/internal/pgtest"
	"github.com/agentnode/agentnode/internal/testkit"
)

// next reads topics until want arrives, or fails after a deadline.
func next(t *testing.T, topics <-chan string, want string) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case got := <-topics:
			if got == want {
				return
			}
		case <-deadline:
			t.Fatalf("no %q notification", want)
		}
	}
}

// TestDB_Listen: a change through one instance reaches another's listener,
// and a listener whose connection is cut reconnects and says so (TopicAll).
func TestDB_Listen(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url := pgtest.URL(t)
	a, b := openDB(t, url), openDB(t, url)
	topics := make(chan string, 64)
	done := make(chan struct{})
	go func() { b.Listen(ctx, func(s string) { topics <- s }); close(done) }()
	defer func() { cancel(); <-done }()
	next(t, topics, agentpg.TopicAll)

	if err := a.Agents().Put(ctx, recordstest.Agent("x")); err != nil {
		t.Fatal(err)
	}
	next(t, topics, agentpg.TopicAgents)
	if err := a.Consent().PutRevoked(ctx, consent.Revocation{Agent: "ab", At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	next(t, topics, agentpg.TopicRevoked)
	if err := a.Tasks().Insert(ctx, tasks.Task{ID: "t1", Status: tasks.StatusPending}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Tasks().Update(ctx, "t1", func(*tasks.Task) error { return nil }); err != nil {
		t.Fatal(err)
	}
	next(t, topics, agentpg.TopicTasks)
	if err := a.Registrations().SetRegistered(ctx, "ab", true); err != nil {
		t.Fatal(err)
	}
	next(t, topics, agentpg.TopicRegistrations)

	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND pid <> pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
	next(t, topics, agentpg.TopicAll)
	if err := a.Agents().Put(ctx, recordstest.Agent("y")); err != nil {
		t.Fatal(err)
	}
	next(t, topics, agentpg.TopicAgents)
}

// TestDB_Listen_databaseAway: a listener whose database goes away keeps
// retrying on the backoff schedule (each retry refused) without calling
// fn, and when the database is back it listens again and says so
// (TopicAll), then hears changes as before.
func TestDB_Listen_databaseAway(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url := pgtest.URL(t)
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	outage := testkit.NewOutage(t, u.Host)
	u.Host = outage.Addr()
	a, b := openDB(t, url), openDB(t, u.String())
	topics := make(chan string, 64)
	done := make(chan struct{})
	go func() { b.Listen(ctx, func(s string) { topics <- s }); close(done) }()
	defer func() { cancel(); <-done }()
	next(t, topics, agentpg.TopicAll)

	outage.Down()
	testkit.WaitFor(t, 30*time.Second, "three reconnections refused", func() bool { return outage.Refused() >= 3 })
	outage.Up()
	next(t, topics, agentpg.TopicAll)
	if err := a.Agents().Put(ctx, recordstest.Agent("z")); err != nil {
		t.Fatal(err)
	}
	next(t, topics, agentpg.TopicAgents)
}
