package lmdbw

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/PowerDNS/lmdb-go/lmdb"
	eslmdb "github.com/fiatjaf/eventstore/lmdb"
	"github.com/nbd-wtf/go-nostr"
)

// initBackend opens a backend on dir with Init and a writer on it.
func initBackend(t *testing.T, dir string, mapSize int64) (*eslmdb.LMDBBackend, *Writer) {
	t.Helper()
	b := &eslmdb.LMDBBackend{Path: dir, MapSize: mapSize}
	if err := Init(b); err != nil {
		t.Fatal(err)
	}
	w, err := Open(b)
	if err != nil {
		b.Close()
		t.Fatal(err)
	}
	return b, w
}

// stored returns the ids the backend's own query finds.
func stored(t *testing.T, b *eslmdb.LMDBBackend) []string {
	t.Helper()
	var ids []string
	for _, evt := range query(t, b, nostr.Filter{Limit: 100_000}) {
		ids = append(ids, evt.ID)
	}
	return ids
}

func TestInit_NoWriteMap(t *testing.T) {
	b, w := initBackend(t, t.TempDir(), 0)
	defer b.Close()
	env, err := backendEnv(b)
	if err != nil {
		t.Fatal(err)
	}
	flags, err := env.Flags()
	if err != nil {
		t.Fatal(err)
	}
	if flags&lmdb.WriteMap != 0 {
		t.Fatalf("environment flags %#x include MDB_WRITEMAP", flags)
	}
	evts := varied(t)
	if err := w.Commit(saves(evts)); err != nil {
		t.Fatal(err)
	}
	if got, want := len(stored(t, b)), len(evts); got != want {
		t.Fatalf("backend query after Init: got %d events, want %d", got, want)
	}
}

// TestInit_ExistingEnvironments opens with Init an environment that
// eventstore's own Init created and filled (every data dir written before
// Init existed), then reopens it with Init: the events and the layout are
// the same each time.
func TestInit_ExistingEnvironments(t *testing.T) {
	dir := t.TempDir()
	old := &eslmdb.LMDBBackend{Path: dir}
	if err := old.Init(); err != nil {
		t.Fatal(err)
	}
	evts := varied(t)
	for _, evt := range evts {
		if err := old.SaveEvent(context.Background(), evt); err != nil {
			t.Fatal(err)
		}
	}
	want := dump(t, old)
	old.Close()
	for round := range 2 {
		b, w := initBackend(t, dir, 0)
		if got := dump(t, b); strings.Join(got, "\n") != strings.Join(want, "\n") {
			b.Close()
			t.Fatalf("round %d: the layout changed on open", round)
		}
		if got := len(stored(t, b)); got != len(evts) {
			b.Close()
			t.Fatalf("round %d: got %d events, want %d", round, got, len(evts))
		}
		if err := w.Commit(saves(evts)); err != nil { // duplicates: a write transaction that changes nothing
			b.Close()
			t.Fatal(err)
		}
		b.Close()
	}
}

// TestCommit_MapFull fills a small map: the failing batch is refused with
// ErrMapFull and every op Failed, and the writer keeps working.
func TestCommit_MapFull(t *testing.T) {
	b, w := initBackend(t, t.TempDir(), 1<<20)
	defer b.Close()
	sk := nostr.GeneratePrivateKey()
	var err error
	var ops []*Op
	n := 0
	for i := 0; i < 200 && err == nil; i++ {
		ops = nil
		for j := range 4 {
			content := fmt.Sprintf("%d/%d %s", i, j, strings.Repeat("x", 8000))
			ops = append(ops, &Op{Action: Save, Event: signed(t, sk, 1, nostr.Timestamp(1000+i), nil, content)})
		}
		if err = w.Commit(ops); err == nil {
			n += len(ops)
		}
	}
	if !errors.Is(err, ErrMapFull) {
		t.Fatalf("filling a 1 MiB map: got %v, want ErrMapFull", err)
	}
	for _, op := range ops {
		if op.Outcome != Failed || !errors.Is(op.Err, ErrMapFull) {
			t.Fatalf("op of the refused batch: outcome %d, err %v", op.Outcome, op.Err)
		}
	}
	if got := len(stored(t, b)); got != n {
		t.Fatalf("after the refused batch: %d events stored, want the %d committed", got, n)
	}
	small := []*Op{{Action: Save, Event: signed(t, sk, 1, 5000, nil, "small")}}
	if err := w.Commit(small); err != nil || small[0].Outcome != Stored {
		t.Fatalf("a small batch after the refused one: %v, outcome %d", err, small[0].Outcome)
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want error
	}{
		{&lmdb.OpError{Op: "mdb_txn_commit", Errno: syscall.ENOSPC}, ErrDiskFull},
		{fmt.Errorf("wrapped: %w", &lmdb.OpError{Op: "mdb_put", Errno: syscall.EDQUOT}), ErrDiskFull},
		{&lmdb.OpError{Op: "mdb_put", Errno: lmdb.MapFull}, ErrMapFull},
		{syscall.ENOSPC, ErrDiskFull},
	} {
		if got := classify(tc.err); !errors.Is(got, tc.want) {
			t.Errorf("classify(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
	if got := classify(&lmdb.OpError{Op: "mdb_put", Errno: lmdb.Corrupted}); errors.Is(got, ErrDiskFull) || errors.Is(got, ErrMapFull) {
		t.Errorf("classify(corrupted) = %v", got)
	}
}

// saves turns events into Save ops.
func saves(evts []*nostr.Event) []*Op {
	ops := make([]*Op, len(evts))
	for i, evt := range evts {
		ops[i] = &Op{Action: Save, Event: evt}
	}
	return ops
}
