package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// TestStore_Differential saves random events (regular, replaceable,
// addressable, expiring), deletes some, and checks that Query answers every
// random filter exactly as a brute-force filter.Matches scan over what a
// correct store holds (order included), and Count as its size.
func TestStore_Differential(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 300
	}
	st, _ := openTestStore(t)
	ctx := context.Background()
	w := newWorld(7)
	o := &oracle{stored: map[string]*nostr.Event{}}
	var batch []*nostr.Event
	flush := func() {
		results, err := st.SaveBatch(ctx, batch)
		if err != nil {
			t.Fatal(err)
		}
		for i, evt := range batch {
			if got, want := results[i], o.save(evt); !errors.Is(got, want) {
				t.Fatalf("save kind %d %s: got %v, want %v", evt.Kind, evt.ID, got, want)
			}
		}
		batch = batch[:0]
	}
	for i := range n {
		evt := w.event(t)
		batch = append(batch, evt)
		if i%5 == 0 { // a resent event
			batch = append(batch, evt)
		}
		if len(batch) >= 1+w.rng.IntN(20) {
			flush()
		}
		if i%50 == 49 {
			id := w.pick(w.ids)
			_, had := o.stored[id]
			deleted, err := st.Delete(ctx, id)
			if err != nil || deleted != had {
				t.Fatalf("delete %s: got %v %v, want %v", id, deleted, err, had)
			}
			delete(o.stored, id)
		}
	}
	flush()
	nonEmpty := 0
	for i := range 500 {
		f := w.filter()
		got, err := st.Query(ctx, f)
		if err != nil {
			t.Fatalf("filter %d %v: %v", i, f, err)
		}
		want := o.query(f, nostr.Now(), st.limit(f))
		if len(want) > 0 {
			nonEmpty++
		}
		if !slices.Equal(idsOf(got), want) {
			t.Fatalf("filter %d %v:\n got %d %v\nwant %d %v", i, f, len(got), idsOf(got), len(want), want)
		}
		cnt, err := st.Count(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if all := o.query(f, nostr.Now(), -1); int(cnt) != len(all) {
			t.Fatalf("count %v: got %d, want %d", f, cnt, len(all))
		}
	}
	if nonEmpty < 150 {
		t.Fatalf("only %d of 500 filters matched anything: the test world is too sparse", nonEmpty)
	}
	t.Logf("%d events stored, %d of 500 filters non-empty", len(o.stored), nonEmpty)
}

// TestStore_ExpiredPurge checks NIP-40: an expired event is hidden from
// Query and Count at once and PurgeExpired removes it.
func TestStore_ExpiredPurge(t *testing.T) {
	st, _ := openTestStore(t)
	ctx := context.Background()
	sk := nostr.GeneratePrivateKey()
	now := nostr.Now()
	expired := signed(t, sk, 1, now, nostr.Tags{{"expiration", fmt.Sprint(now - 1)}})
	live := signed(t, sk, 1, now, nostr.Tags{{"expiration", fmt.Sprint(now + 3600)}})
	for _, evt := range []*nostr.Event{expired, live} {
		if err := st.Save(ctx, evt); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.Query(ctx, nostr.Filter{Kinds: []int{1}})
	if err != nil || !slices.Equal(idsOf(got), []string{live.ID}) {
		t.Fatalf("query: got %v %v, want only the live event", idsOf(got), err)
	}
	n, err := st.PurgeExpired(ctx, now)
	if err != nil || n != 1 {
		t.Fatalf("purge: got %d %v, want 1", n, err)
	}
}

// TestOpen_Migrations checks that several instances opening one database
// at once all succeed and leave one schema version, and that a database
// migrated by a newer binary is refused.
func TestOpen_Migrations(t *testing.T) {
	_, url := openTestStore(t)
	ctx := context.Background()
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			st, err := Open(ctx, url)
			if err == nil {
				st.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	st, _ := Open(ctx, url)
	defer st.Close()
	var rows int
	st.pool.QueryRow(ctx, `SELECT count(*) FROM pgstore_schema`).Scan(&rows)
	if got, want := rows, SchemaVersion; got != want {
		t.Fatalf("schema rows: got %d, want %d", got, want)
	}
	st.pool.Exec(ctx, `INSERT INTO pgstore_schema VALUES ($1)`, SchemaVersion+1)
	if _, err := Open(ctx, url); !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("open newer schema: got %v, want ErrSchemaTooNew", err)
	}
}

func signed(t testing.TB, sk string, kind int, at nostr.Timestamp, tags nostr.Tags) *nostr.Event {
	t.Helper()
	evt := &nostr.Event{Kind: kind, CreatedAt: at, Tags: tags, Content: "x"}
	if err := evt.Sign(sk); err != nil {
		t.Fatal(err)
	}
	return evt
}
