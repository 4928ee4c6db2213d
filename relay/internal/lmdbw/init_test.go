package lmdbw

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/PowerDNS/lmdb-go/lmdb"
	eslmdb "github.com/fiatjaf/eventstore/lmdb"
	"github.com/nbd-wtf/go-nostr"
)

// stored returns the ids the store's reader finds.
func stored(t *testing.T, w *Writer) []string {
	t.Helper()
	return ids(t, w, nostr.Filter{Limit: 100_000})
}

func TestOpen_NoWriteMap(t *testing.T) {
	w := openWriter(t)
	flags, err := w.env.Flags()
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
	if got, want := len(stored(t, w)), len(evts); got != want {
		t.Fatalf("query after Open: got %d events, want %d", got, want)
	}
}

// TestOpen_ExistingEnvironments opens an environment that eventstore's own
// Init created and filled, twice: the layout is unchanged by opening, the
// events are read, a new record gets the serial after the last one, and
// eventstore reads everything back.
func TestOpen_ExistingEnvironments(t *testing.T) {
	dir := t.TempDir()
	evts := varied(t)
	eventstoreDir(t, dir, func(b *eslmdb.LMDBBackend) {
		for _, evt := range evts {
			if err := b.SaveEvent(context.Background(), evt); err != nil {
				t.Fatal(err)
			}
		}
	})
	want := dumpDir(t, dir)
	for round := range 2 {
		w := openAt(t, dir, 0)
		if got := dump(t, w); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("round %d: the layout changed on open", round)
		}
		if got := len(stored(t, w)); got != len(evts) {
			t.Fatalf("round %d: got %d events, want %d", round, got, len(evts))
		}
		if err := w.Commit(saves(evts)); err != nil { // duplicates: a write transaction that changes nothing
			t.Fatal(err)
		}
		closeWriter(t, w)
	}
	w := openAt(t, dir, 0)
	extra := signed(t, nostr.GeneratePrivateKey(), 1, 2000, nil, "after eventstore")
	assertSerial(t, w, extra, uint32(len(evts)+1))
	closeWriter(t, w)
	got := eventstoreQuery(t, dir, []nostr.Filter{{}})[0]
	if len(got) != len(evts)+1 || got[0].ID != extra.ID {
		t.Fatalf("eventstore reads %d events (newest %v), want %d with %s first", len(got), got, len(evts)+1, extra.ID)
	}
}

// assertSerial stores evt and checks the raw key it got.
func assertSerial(t *testing.T, w *Writer, evt *nostr.Event, want uint32) {
	t.Helper()
	if got := outcomes(t, w, &Op{Action: Save, Event: evt}); got[0] != Stored {
		t.Fatalf("outcome %v", got)
	}
	key := fmt.Sprintf("raw %08x ", want)
	for _, line := range dump(t, w) {
		if strings.HasPrefix(line, key) {
			if !strings.Contains(line, evt.ID) {
				t.Fatalf("serial %d holds another event: %s", want, line)
			}
			return
		}
	}
	t.Fatalf("no record at serial %d", want)
}

// TestOpen_RefusesAnotherLayoutVersion: a store of another version
// (which eventstore would re-index) is refused, not written.
func TestOpen_RefusesAnotherLayoutVersion(t *testing.T) {
	dir := t.TempDir()
	w := openAt(t, dir, 0)
	err := w.env.Update(func(txn *lmdb.Txn) error {
		settings, err := txn.OpenDBI("settings", 0)
		if err != nil {
			return err
		}
		return txn.Put(settings, []byte{'v'}, []byte{0, 8, 0, 0}, 0)
	})
	if err != nil {
		t.Fatal(err)
	}
	closeWriter(t, w)
	if w, err := Open(dir, 0); !errors.Is(err, ErrLayout) {
		if err == nil {
			w.Close()
		}
		t.Fatalf("Open of a version 8 store: %v, want ErrLayout", err)
	}
}

// TestCommit_MapFull fills a small map: the failing batch is refused with
// ErrMapFull and every op Failed, and the writer keeps working.
func TestCommit_MapFull(t *testing.T) {
	w := openAt(t, t.TempDir(), 1<<20)
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
	if got := len(stored(t, w)); got != n {
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

// TestOpen_DataFileHasTheMapSize: a new store's data file is as large as
// its map (sparse), as eventstore's open left every store written before
// this package owned the environment; a larger file is left alone.
func TestOpen_DataFileHasTheMapSize(t *testing.T) {
	dir := t.TempDir()
	w := openAt(t, dir, 1<<26)
	if err := w.Commit(saves(varied(t))); err != nil {
		t.Fatal(err)
	}
	closeWriter(t, w)
	path := filepath.Join(dir, "data.mdb")
	if st, err := os.Stat(path); err != nil || st.Size() != 1<<26 {
		t.Fatalf("data file: %v, %v; want %d bytes", st, err, 1<<26)
	}
	w = openAt(t, dir, 1<<25)
	if got := len(stored(t, w)); got != len(varied(t)) {
		t.Fatalf("%d events after reopening with a smaller map, want %d", got, len(varied(t)))
	}
	closeWriter(t, w)
	if st, err := os.Stat(path); err != nil || st.Size() != 1<<26 {
		t.Fatalf("data file after a smaller map: %v, %v; want %d bytes", st, err, 1<<26)
	}
}
