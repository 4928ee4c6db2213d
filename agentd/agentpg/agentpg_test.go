package agentpg_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/agentpg"
	"github.com/agentnode/agentnode/agentd/consent"
	"github.com/agentnode/agentnode/agentd/consent/consenttest"
	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/agentd/directory/registrationstest"
	"github.com/agentnode/agentnode/agentd/dm"
	"github.com/agentnode/agentnode/agentd/dm/ledgertest"
	"github.com/agentnode/agentnode/agentd/filestest"
	"github.com/agentnode/agentnode/agentd/keystore"
	"github.com/agentnode/agentnode/agentd/keystore/keystoretest"
	"github.com/agentnode/agentnode/agentd/recordstest"
	"github.com/agentnode/agentnode/agentd/tasks"
	"github.com/agentnode/agentnode/agentd/tasks/taskstest"
	"github.com/agentnode/agentnode/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// openDB opens a DB on url (each call is another instance).
func openDB(t testing.TB, url string) *agentpg.DB {
	t.Helper()
	db, err := agentpg.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

func TestKeys_conformance(t *testing.T) {
	keystoretest.Run(t, func(t *testing.T) keystoretest.Open {
		url := pgtest.URL(t)
		return func(o keystore.Options) keystore.Keys { return openDB(t, url).Keys(o) }
	})
}

func TestAgents_conformance(t *testing.T) {
	recordstest.Run(t, func(t *testing.T) recordstest.Open {
		url := pgtest.URL(t)
		return func() agentd.Records { return openDB(t, url).Agents() }
	})
}

func TestOpen_refusesNewerSchema(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	openDB(t, url)
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, `INSERT INTO agentpg_schema VALUES ($1)`, agentpg.SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	if _, err := agentpg.Open(ctx, url); !errors.Is(err, agentpg.ErrSchemaTooNew) {
		t.Fatalf("got %v, want ErrSchemaTooNew", err)
	}
}

func TestLedger_conformance(t *testing.T) {
	ledgertest.Run(t, func(t *testing.T) ledgertest.Open {
		url := pgtest.URL(t)
		return func(w time.Duration) dm.Ledger {
			l, err := openDB(t, url).Ledger(context.Background(), w)
			if err != nil {
				t.Fatal(err)
			}
			return l
		}
	})
}

// TestLedger_beginRace: two instances that both saw a wrap as new: one
// Begin wins, the other is refused, whatever their memory says.
func TestLedger_beginRace(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	a, err := openDB(t, url).Ledger(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	b, err := openDB(t, url).Ledger(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	wrap := &nostr.Event{ID: "w1", CreatedAt: nostr.Now()}
	if err := a.Begin(ctx, wrap, nil); err != nil {
		t.Fatal(err)
	}
	if b.Has(wrap.ID) {
		t.Fatal("b's memory was loaded before a's Begin: the test needs it not to know")
	}
	if err := b.Begin(ctx, wrap, nil); !errors.Is(err, dm.ErrAnswered) {
		t.Fatalf("b.Begin: %v, want ErrAnswered", err)
	}
	if !b.Has(wrap.ID) {
		t.Error("b does not remember the refused wrap")
	}
}

func TestTasks_conformance(t *testing.T) {
	taskstest.Run(t, func(t *testing.T) taskstest.Open {
		url := pgtest.URL(t)
		return func() tasks.Backend { return openDB(t, url).Tasks() }
	})
}

func TestConsent_conformance(t *testing.T) {
	consenttest.Run(t, func(t *testing.T) consenttest.Open {
		url := pgtest.URL(t)
		return func() consent.Backend { return openDB(t, url).Consent() }
	})
}

func TestRegistrations_conformance(t *testing.T) {
	registrationstest.Run(t, func(t *testing.T) registrationstest.Open {
		url := pgtest.URL(t)
		return func() directory.Registrations { return openDB(t, url).Registrations() }
	})
}

func TestFiles_conformance(t *testing.T) {
	filestest.Run(t, func(t *testing.T) filestest.Open {
		url := pgtest.URL(t)
		return func() agentd.AgentFiles { return openDB(t, url).Files() }
	})
}

func TestDB_Token_shared(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	a, err := openDB(t, url).Token(ctx)
	if err != nil || len(a) != 64 {
		t.Fatalf("token %q, %v", a, err)
	}
	if b, err := openDB(t, url).Token(ctx); err != nil || b != a {
		t.Fatalf("second instance's token %q, %v; want %q", b, err, a)
	}
}

// TestAgents_InstallRace: installs of one identity (definition, owner,
// name) raced through two instances' handles add one agent; every racer
// gets that agent (20 identities, 8 racers each). Another name is another
// agent; so is the definition an agent was upgraded to.
func TestAgents_InstallRace(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	handles := []*agentpg.Agents{openDB(t, url).Agents(), openDB(t, url).Agents()}
	const rounds, racers = 20, 8
	var protos []agentd.Agent
	for range rounds {
		protos = append(protos, recordstest.Agent("racer"))
	}
	type result struct {
		round   int
		a       agentd.Agent
		created bool
		err     error
	}
	results := make(chan result, rounds*racers)
	start := make(chan struct{})
	for round, proto := range protos {
		for i := range racers {
			a := recordstest.Agent("racer")
			a.Owner, a.DefinitionID, a.InstalledFrom, a.DefinitionKey = proto.Owner, proto.DefinitionID, proto.InstalledFrom, proto.DefinitionKey
			go func() {
				<-start
				got, created, err := handles[i%2].Install(ctx, a)
				results <- result{round, got, created, err}
			}()
		}
	}
	close(start)
	winners := map[int]string{}
	got := map[int][]string{}
	for range rounds * racers {
		r := <-results
		if r.err != nil {
			t.Fatal(r.err)
		}
		if r.created {
			if w, ok := winners[r.round]; ok {
				t.Fatalf("identity %d: two installs created an agent (%s, %s)", r.round, w, r.a.PubKey)
			}
			winners[r.round] = r.a.PubKey
		}
		got[r.round] = append(got[r.round], r.a.PubKey)
	}
	for round := range rounds {
		for _, pk := range got[round] {
			if pk != winners[round] {
				t.Fatalf("identity %d: a racer got agent %s, the one created is %q", round, pk, winners[round])
			}
		}
	}
	list, err := handles[0].List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != rounds {
		t.Fatalf("recorded %d agents, want %d", len(list), rounds)
	}
	// Now running the definition (upgraded from another) also counts.
	up := recordstest.Agent("upgraded")
	up.InstalledFrom = recordstest.Agent("x").DefinitionID
	if err := handles[0].Put(ctx, up); err != nil {
		t.Fatal(err)
	}
	again := recordstest.Agent("upgraded")
	again.Owner, again.DefinitionID, again.InstalledFrom = up.Owner, up.DefinitionID, up.DefinitionID
	if a, created, err := handles[1].Install(ctx, again); err != nil || created || a.PubKey != up.PubKey {
		t.Fatalf("install of the definition an agent was upgraded to: %s created=%v %v, want %s", a.PubKey, created, err, up.PubKey)
	}
	other := recordstest.Agent("racer 2")
	other.Owner, other.DefinitionID, other.InstalledFrom = protos[0].Owner, protos[0].DefinitionID, protos[0].InstalledFrom
	if _, created, err := handles[1].Install(ctx, other); err != nil || !created {
		t.Fatalf("another name: created=%v %v, want a new agent", created, err)
	}
}
