package crdt

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// fakeWall is a deterministic wall clock for tests.
type fakeWall struct{ ms int64 }

func (f *fakeWall) now() time.Time { f.ms++; return time.UnixMilli(f.ms) }

func boundText(r ReplicaID) *RGAText {
	t := NewRGAText()
	w := &fakeWall{}
	t.Bind(NewHLC(r, w.now))
	return t
}

var alphabet = []rune("abcdefghij é漢😀\n")

func randText(r *rand.Rand, max int) string {
	n := 1 + r.IntN(max)
	b := make([]rune, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// TestRGAText_Oracle replays random local edits against a []rune model: a
// differential test of spans, splits and the position index.
func TestRGAText_Oracle(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 1))
		doc, model := boundText("a"), []rune{}
		for step := range 3000 {
			if len(model) > 0 && r.IntN(3) == 0 {
				pos := r.IntN(len(model))
				n := 1 + r.IntN(min(8, len(model)-pos))
				doc.Delete(pos, n)
				model = slices.Delete(model, pos, pos+n)
			} else {
				pos := r.IntN(len(model) + 1)
				if r.IntN(4) > 0 && len(model) > 0 { // mostly type near the end, like people
					pos = len(model) - r.IntN(min(3, len(model)))
				}
				s := randText(r, 6)
				doc.Insert(pos, s)
				model = slices.Insert(model, pos, []rune(s)...)
			}
			if got, want := doc.Len(), len(model); got != want {
				t.Fatalf("seed %d step %d: Len = %d, want %d", seed, step, got, want)
			}
		}
		if got, want := doc.String(), string(model); got != want {
			t.Fatalf("seed %d: text differs\n got %q\nwant %q", seed, got, want)
		}
	}
}

// TestRGAText_Clamp checks out-of-range positions are clamped.
func TestRGAText_Clamp(t *testing.T) {
	doc := boundText("a")
	doc.Insert(10, "abc")
	doc.Insert(-3, "<")
	doc.Delete(2, 100)
	if got, want := doc.String(), "<a"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if ops := doc.Delete(5, 1); len(ops) != 0 {
		t.Fatalf("delete past end made %d ops", len(ops))
	}
}

// TestRGAText_Concurrent checks the RGA ordering rule on concurrent inserts
// at one place: greater id first, runs are not interleaved.
func TestRGAText_Concurrent(t *testing.T) {
	a, b := boundText("a"), boundText("b")
	base := a.Insert(0, "[]")
	mustApply(t, b, base...)
	opsA := a.Insert(1, "xx")
	opsA = append(opsA, a.Insert(3, "xx")...)
	opsB := b.Insert(1, "yyy")
	mustApply(t, a, opsB...)
	mustApply(t, b, opsA...)
	if a.String() != b.String() {
		t.Fatalf("diverged: %q vs %q", a.String(), b.String())
	}
	if got := a.String(); got != "[xxxxyyy]" && got != "[yyyxxxx]" {
		t.Fatalf("interleaved: %q", got)
	}
}

func TestRGAText_InvalidOps(t *testing.T) {
	doc := NewRGAText()
	for _, op := range []Op{
		{Kind: OpInsert, Text: "x"},
		{ID: OpID{"a", 1}, Kind: OpInsert},
		{ID: OpID{"a", 1}, Kind: OpInsert, Text: "x", Ref: OpID{"b", 5}},
		{ID: OpID{"a", 1}, Kind: OpDelete},
		{ID: OpID{"a", 1}, Kind: OpSet, Value: json.RawMessage("1")},
		{ID: OpID{"a", 1}, Kind: OpInsert, Text: "\xff"},
	} {
		if err := doc.Apply(op); err == nil {
			t.Errorf("Apply(%+v) = nil, want ErrInvalidOp", op)
		}
	}
	if _, err := NewRGAText().localDelete(0, 1); err != ErrNoClock {
		t.Errorf("unbound delete: err = %v, want ErrNoClock", err)
	}
}

func mustApply(t testing.TB, c CRDT, ops ...Op) {
	t.Helper()
	for _, op := range ops {
		if err := c.Apply(op); err != nil {
			t.Fatalf("Apply(%s %s): %v", op.Kind, op.ID, err)
		}
	}
}
