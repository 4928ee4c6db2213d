package lmdbw

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"io"
	"log"
	"math"
	"os"

	"github.com/PowerDNS/lmdb-go/lmdb"
	eslmdb "github.com/fiatjaf/eventstore/lmdb"
	"github.com/nbd-wtf/go-nostr"
)

// openWriter opens a fresh store and closes it when the test ends.
func openWriter(t *testing.T) *Writer {
	t.Helper()
	return openAt(t, t.TempDir(), 0)
}

// openAt opens the store in dir; it is closed when the test ends unless
// the test closes it first (closeWriter).
func openAt(t *testing.T, dir string, mapSize int64) *Writer {
	t.Helper()
	w, err := Open(dir, mapSize)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeWriter(t, w) })
	return w
}

// closeWriter closes w once its read transactions have ended; a second
// call does nothing.
func closeWriter(t *testing.T, w *Writer) {
	t.Helper()
	if w.env == nil {
		return
	}
	if ok, err := w.WaitReaders(10 * time.Second); !ok || err != nil {
		t.Fatalf("read transactions still open: %v", err)
	}
	w.Close()
	w.env = nil
}

// signed builds and signs an event by sk.
func signed(t *testing.T, sk string, kind int, at nostr.Timestamp, tags nostr.Tags, content string) *nostr.Event {
	t.Helper()
	evt := &nostr.Event{Kind: kind, CreatedAt: at, Tags: tags, Content: content}
	if err := evt.Sign(sk); err != nil {
		t.Fatal(err)
	}
	return evt
}

// varied is a set of events exercising every index of the layout.
func varied(t *testing.T) []*nostr.Event {
	sk, other := nostr.GeneratePrivateKey(), nostr.GeneratePrivateKey()
	opk, _ := nostr.GetPublicKey(other)
	long := string(bytes.Repeat([]byte("x"), 120))
	return []*nostr.Event{
		signed(t, sk, 1, 1000, nostr.Tags{{"p", opk}, {"e", opk}, {"t", "go"}, {"t", "go"}, {"t", long}}, "hello"),
		signed(t, sk, 4129, 1001, nostr.Tags{{"title", "a lesson"}, {"a", "30023:" + opk + ":slug"}, {"x"}, {}}, "text"),
		signed(t, other, 30023, 1002, nostr.Tags{{"d", "slug"}, {"d", "second"}, {"p", opk}}, ""),
		signed(t, other, 0, 1003, nostr.Tags{{"bot"}}, `{"name":"n"}`),
		signed(t, sk, 7, 1004, nostr.Tags{{"e", "not-hex-but-sixty-four-characters-long-xxxxxxxxxxxxxxxxxxxxxxxxxx"}}, "+"),
	}
}

// dump lists every key/value pair of every named database of w's store.
func dump(t *testing.T, w *Writer) []string {
	t.Helper()
	out, err := dumpEnv(w.env)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// dumpDir is dump of the closed store in dir, opened read-only.
func dumpDir(t *testing.T, dir string) []string {
	t.Helper()
	env, err := openReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	out, err := dumpEnv(env)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func dumpEnv(env *lmdb.Env) ([]string, error) {
	var out []string
	names := []string{"raw", "created_at", "id", "kind", "pubkey", "pubkeyKind", "tag", "tag32", "tagaddr", "ptagKind"}
	err := env.View(func(txn *lmdb.Txn) error {
		for _, name := range names {
			dbi, err := txn.OpenDBI(name, 0)
			if err != nil {
				return err
			}
			cur, err := txn.OpenCursor(dbi)
			if err != nil {
				return err
			}
			for k, v, err := cur.Get(nil, nil, lmdb.First); err == nil; k, v, err = cur.Get(nil, nil, lmdb.Next) {
				out = append(out, fmt.Sprintf("%s %x %x", name, k, v))
			}
			cur.Close()
		}
		return nil
	})
	return out, err
}

// eventstoreDir opens eventstore/lmdb's own backend on dir, runs fn and
// closes it (its SaveEvent and DeleteEvent end their transactions before
// they return).
func eventstoreDir(t *testing.T, dir string, fn func(*eslmdb.LMDBBackend)) {
	t.Helper()
	log.SetOutput(io.Discard) // eventstore logs its migration of a fresh environment
	defer log.SetOutput(os.Stderr)
	b := &eslmdb.LMDBBackend{Path: dir}
	if err := b.Init(); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	fn(b)
}

func TestWriter_WritesTheBackendsLayout(t *testing.T) {
	ctx := context.Background()
	evts := varied(t)
	ref := t.TempDir()
	eventstoreDir(t, ref, func(b *eslmdb.LMDBBackend) {
		for _, evt := range evts {
			if err := b.SaveEvent(ctx, evt); err != nil {
				t.Fatal(err)
			}
		}
	})
	w := openWriter(t)
	ops := make([]*Op, len(evts))
	for i, evt := range evts {
		ops[i] = &Op{Action: Save, Event: evt}
	}
	if err := w.Commit(ops); err != nil {
		t.Fatal(err)
	}
	for i, op := range ops {
		if op.Outcome != Stored {
			t.Fatalf("op %d: outcome %d, err %v", i, op.Outcome, op.Err)
		}
	}
	if want, have := dumpDir(t, ref), dump(t, w); len(want) < 5*6 || !slices.Equal(want, have) {
		t.Fatalf("layout differs:\nbackend: %q\nwriter:  %q", want, have)
	}
	// Deleting through the writer leaves what the backend's delete leaves.
	eventstoreDir(t, ref, func(b *eslmdb.LMDBBackend) {
		if err := b.DeleteEvent(ctx, evts[0]); err != nil {
			t.Fatal(err)
		}
	})
	if err := w.Commit([]*Op{{Action: Delete, Event: evts[0]}}); err != nil {
		t.Fatal(err)
	}
	if want, have := dumpDir(t, ref), dump(t, w); !slices.Equal(want, have) {
		t.Fatalf("layout after delete differs:\nbackend: %q\nwriter:  %q", want, have)
	}
}

// TestWriter_RoundTripsThroughEventstoresQueries: what the writer wrote,
// eventstore's own QueryEvents reads back (by id, and by author and kind).
func TestWriter_RoundTripsThroughEventstoresQueries(t *testing.T) {
	evts := varied(t)
	dir := t.TempDir()
	w := openAt(t, dir, 0)
	if err := w.Commit(saves(evts)); err != nil {
		t.Fatal(err)
	}
	closeWriter(t, w)
	var filters []nostr.Filter
	for _, evt := range evts {
		filters = append(filters, nostr.Filter{IDs: []string{evt.ID}},
			nostr.Filter{Authors: []string{evt.PubKey}, Kinds: []int{evt.Kind}})
	}
	got := eventstoreQuery(t, dir, filters)
	for i, evt := range evts {
		byID, byAuthor := got[2*i], got[2*i+1]
		if len(byID) != 1 || byID[0].String() != evt.String() {
			t.Fatalf("read back %v, want %v", byID, evt)
		}
		if len(byAuthor) == 0 || byAuthor[0].ID != evt.ID {
			t.Fatalf("author+kind query misses %s", evt.ID)
		}
	}
}

// query reads f's matches through the writer's own reader, newest first.
func query(t *testing.T, w *Writer, f nostr.Filter) []*nostr.Event {
	t.Helper()
	var out []*nostr.Event
	var failed error
	err := w.Read(context.Background(), w.Plan(f), 0, math.MaxUint32, func(_ uint32, raw []byte) bool {
		evt, err := Decode(raw)
		if err != nil {
			failed = err
			return false
		}
		if f.Matches(evt) {
			out = append(out, evt)
		}
		return true
	})
	if err = errors.Join(err, failed); err != nil {
		t.Fatal(err)
	}
	return out
}

// outcomes commits ops and returns their outcomes.
func outcomes(t *testing.T, w *Writer, ops ...*Op) []Outcome {
	t.Helper()
	if err := w.Commit(ops); err != nil {
		t.Fatal(err)
	}
	out := make([]Outcome, len(ops))
	for i, op := range ops {
		out[i] = op.Outcome
	}
	return out
}

// ids queries the store and returns the ids found, sorted.
func ids(t *testing.T, w *Writer, f nostr.Filter) []string {
	t.Helper()
	var out []string
	for _, e := range query(t, w, f) {
		out = append(out, e.ID)
	}
	slices.Sort(out)
	return out
}

func TestWriter_DuplicatesInOneBatch(t *testing.T) {
	w := openWriter(t)
	e := signed(t, nostr.GeneratePrivateKey(), 1, 100, nil, "once")
	got := outcomes(t, w, &Op{Action: Save, Event: e}, &Op{Action: Save, Event: e})
	if want := []Outcome{Stored, Duplicate}; !slices.Equal(got, want) {
		t.Fatalf("outcomes %v, want %v", got, want)
	}
	if n := len(ids(t, w, nostr.Filter{Kinds: []int{1}})); n != 1 {
		t.Fatalf("%d stored, want 1", n)
	}
}

func TestWriter_ReplacementInOneBatch(t *testing.T) {
	w := openWriter(t)
	sk := nostr.GeneratePrivateKey()
	v1 := signed(t, sk, 30023, 100, nostr.Tags{{"d", "x"}}, "v1")
	v3 := signed(t, sk, 30023, 300, nostr.Tags{{"d", "x"}}, "v3")
	v2 := signed(t, sk, 30023, 200, nostr.Tags{{"d", "x"}}, "v2")
	other := signed(t, sk, 30023, 50, nostr.Tags{{"d", "y"}}, "other address")
	p1 := signed(t, sk, 0, 100, nil, "profile 1")
	p2 := signed(t, sk, 0, 200, nil, "profile 2")
	got := outcomes(t, w,
		&Op{Action: Replace, Event: v1}, &Op{Action: Replace, Event: v3}, &Op{Action: Replace, Event: v2},
		&Op{Action: Replace, Event: other}, &Op{Action: Replace, Event: p2}, &Op{Action: Replace, Event: p1},
		&Op{Action: Replace, Event: v3})
	want := []Outcome{Stored, Stored, Ignored, Stored, Stored, Ignored, Duplicate}
	if !slices.Equal(got, want) {
		t.Fatalf("outcomes %v, want %v", got, want)
	}
	wantIDs := []string{v3.ID, other.ID, p2.ID}
	slices.Sort(wantIDs)
	if have := ids(t, w, nostr.Filter{Kinds: []int{0, 30023}}); !slices.Equal(have, wantIDs) {
		t.Fatalf("stored %v, want %v", have, wantIDs)
	}
}

func TestWriter_DeletionsInOneBatch(t *testing.T) {
	w := openWriter(t)
	sk, stranger := nostr.GeneratePrivateKey(), nostr.GeneratePrivateKey()
	pk, _ := nostr.GetPublicKey(sk)
	note := signed(t, sk, 1, 100, nil, "to delete")
	foreign := signed(t, stranger, 1, 100, nil, "not theirs")
	art := signed(t, sk, 30023, 100, nostr.Tags{{"d", "art"}}, "article")
	del := signed(t, sk, 5, 200, nostr.Tags{{"e", note.ID}, {"e", foreign.ID}, {"a", "30023:" + pk + ":art"}}, "")
	late := signed(t, sk, 1, 150, nil, "deleted before it arrived")
	delLate := signed(t, sk, 5, 160, nostr.Tags{{"e", late.ID}}, "")
	newerArt := signed(t, sk, 30023, 300, nostr.Tags{{"d", "art"}}, "after the deletion")
	got := outcomes(t, w,
		&Op{Action: Save, Event: note}, &Op{Action: Save, Event: foreign}, &Op{Action: Replace, Event: art},
		&Op{Action: Save, Event: del}, &Op{Action: Save, Event: delLate}, &Op{Action: Save, Event: late},
		&Op{Action: Save, Event: note}, &Op{Action: Replace, Event: art}, &Op{Action: Replace, Event: newerArt})
	want := []Outcome{Stored, Stored, Stored, Stored, Stored, Deleted, Deleted, Deleted, Stored}
	if !slices.Equal(got, want) {
		t.Fatalf("outcomes %v, want %v", got, want)
	}
	wantIDs := []string{foreign.ID, del.ID, delLate.ID, newerArt.ID}
	slices.Sort(wantIDs)
	if have := ids(t, w, nostr.Filter{}); !slices.Equal(have, wantIDs) {
		t.Fatalf("stored %v, want %v", have, wantIDs)
	}
}

func TestWriter_UnencodableEventFailsAloneWithoutAbortingTheBatch(t *testing.T) {
	w := openWriter(t)
	sk := nostr.GeneratePrivateKey()
	big := signed(t, sk, 1, 100, nil, string(bytes.Repeat([]byte("b"), 70_000)))
	ok := signed(t, sk, 1, 101, nil, "fine")
	bigOp := &Op{Action: Save, Event: big}
	got := outcomes(t, w, bigOp, &Op{Action: Save, Event: ok})
	if want := []Outcome{Failed, Stored}; !slices.Equal(got, want) {
		t.Fatalf("outcomes %v, want %v", got, want)
	}
	if !errors.Is(bigOp.Err, ErrUnstorable) {
		t.Fatalf("err %v, want ErrUnstorable", bigOp.Err)
	}
	if have := ids(t, w, nostr.Filter{}); !slices.Equal(have, []string{ok.ID}) {
		t.Fatalf("stored %v, want only %s", have, ok.ID)
	}
}

// TestWriter_ReplacementFindsUnindexedAddresses covers the addresses whose
// d tag the layout does not index (empty, longer than 100 bytes): their
// versions are found through the author+kind index.
func TestWriter_ReplacementFindsUnindexedAddresses(t *testing.T) {
	w := openWriter(t)
	sk := nostr.GeneratePrivateKey()
	long := string(bytes.Repeat([]byte("d"), 150))
	for _, d := range []string{"", long} {
		old := signed(t, sk, 30078, 100, nostr.Tags{{"d", d}}, "old")
		nu := signed(t, sk, 30078, 200, nostr.Tags{{"d", d}}, "new")
		got := outcomes(t, w, &Op{Action: Replace, Event: old}, &Op{Action: Replace, Event: nu}, &Op{Action: Replace, Event: old})
		if want := []Outcome{Stored, Stored, Ignored}; !slices.Equal(got, want) {
			t.Fatalf("d of %d bytes: outcomes %v, want %v", len(d), got, want)
		}
	}
	if n := len(ids(t, w, nostr.Filter{Kinds: []int{30078}})); n != 2 {
		t.Fatalf("%d versions stored, want one per address (2)", n)
	}
}

// TestWriter_DeletionByAddressOfAReplaceableKind deletes a kind 0 by its
// "0:pubkey:" address and refuses an older re-publication.
func TestWriter_DeletionByAddressOfAReplaceableKind(t *testing.T) {
	w := openWriter(t)
	sk := nostr.GeneratePrivateKey()
	pk, _ := nostr.GetPublicKey(sk)
	prof := signed(t, sk, 0, 100, nil, `{"name":"a"}`)
	del := signed(t, sk, 5, 150, nostr.Tags{{"a", "0:" + pk + ":"}}, "")
	older := signed(t, sk, 0, 120, nil, `{"name":"b"}`)
	newer := signed(t, sk, 0, 300, nil, `{"name":"c"}`)
	got := outcomes(t, w, &Op{Action: Replace, Event: prof}, &Op{Action: Save, Event: del},
		&Op{Action: Replace, Event: older}, &Op{Action: Replace, Event: newer})
	if want := []Outcome{Stored, Stored, Deleted, Stored}; !slices.Equal(got, want) {
		t.Fatalf("outcomes %v, want %v", got, want)
	}
	if have := ids(t, w, nostr.Filter{Kinds: []int{0}}); !slices.Equal(have, []string{newer.ID}) {
		t.Fatalf("stored %v, want only the newer profile", have)
	}
}
