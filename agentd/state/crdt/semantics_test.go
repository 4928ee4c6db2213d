package crdt

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// pair returns two bound instances of a CRDT on replicas a and b.
func pair[T CRDT](newT func() T) (T, T) {
	a, b := newT(), newT()
	wa, wb := &fakeWall{}, &fakeWall{}
	a.Bind(NewHLC("a", wa.now))
	b.Bind(NewHLC("b", wb.now))
	return a, b
}

func exchange(t *testing.T, a, b CRDT, fromA, fromB []Op) {
	t.Helper()
	mustApply(t, a, fromB...)
	mustApply(t, b, fromA...)
	if va, vb := valueJSON(t, a), valueJSON(t, b); va != vb {
		t.Fatalf("diverged: %s vs %s", va, vb)
	}
}

func TestLWWRegister_LaterWins(t *testing.T) {
	a, b := pair(NewLWWRegister)
	opA, _ := a.Set("first")
	mustApply(t, b, opA)
	opB, _ := b.Set("second") // b saw a: later by HLC
	exchange(t, a, b, nil, []Op{opB})
	if got, want := valueJSON(t, a), `"second"`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	if v := NewLWWRegister().Value(); v != nil {
		t.Fatalf("unset register value = %v, want nil", v)
	}
}

func TestMVRegister_KeepsConcurrent(t *testing.T) {
	a, b := pair(NewMVRegister)
	opA, _ := a.Set("x")
	opB, _ := b.Set("y")
	exchange(t, a, b, []Op{opA}, []Op{opB})
	if got := a.Value().([]json.RawMessage); len(got) != 2 {
		t.Fatalf("concurrent sets: got %d values, want 2", len(got))
	}
	opC, _ := a.Set("z") // supersedes both
	exchange(t, a, b, []Op{opC}, nil)
	if got, want := valueJSON(t, b), `["z"]`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestFlag_EnableWins(t *testing.T) {
	a, b := pair(NewFlag)
	on, _ := a.Enable()
	mustApply(t, b, on)
	off, _ := a.Disable() // cancels the enable a saw
	on2, _ := b.Enable()  // concurrent with the disable
	exchange(t, a, b, []Op{off}, []Op{on2})
	if a.Value() != true {
		t.Fatal("concurrent enable and disable: flag is off, want on")
	}
	off2, _ := a.Disable()
	exchange(t, a, b, []Op{off2}, nil)
	if b.Value() != false {
		t.Fatal("disable after seeing every enable: flag is on")
	}
}

func TestPNCounter_Sums(t *testing.T) {
	a, b := pair(NewPNCounter)
	o1, _ := a.Add(5)
	o2, _ := b.Add(-2)
	o3, _ := b.Add(10)
	exchange(t, a, b, []Op{o1}, []Op{o2, o3, o2})
	if a.Value() != int64(13) {
		t.Fatalf("got %v, want 13", a.Value())
	}
}

func TestGrowOnlySet_Canonical(t *testing.T) {
	s, _ := pair(NewGrowOnlySet)
	s.Add(map[string]int{"b": 1, "a": 2})
	mustApply(t, s, Op{ID: OpID{"x", 9}, Kind: OpAdd, Value: json.RawMessage(`{ "a":2, "b":1 }`)})
	if s.Len() != 1 || !s.Contains(map[string]int{"a": 2, "b": 1}) {
		t.Fatalf("equal objects stored twice or not found: %s", valueJSON(t, s))
	}
}

func TestLogRGA_OrderedByHLC(t *testing.T) {
	a, b := pair(NewLogRGA)
	o1, _ := a.Append("a1")
	mustApply(t, b, o1)
	o2, _ := b.Append("b1") // after a1: b's clock witnessed it
	o3, _ := a.Append("a2")
	exchange(t, a, b, []Op{o3}, []Op{o2})
	var got []string
	for _, v := range a.Value().([]json.RawMessage) {
		got = append(got, string(v))
	}
	if got[0] != `"a1"` || len(got) != 3 {
		t.Fatalf("log order %v: a1 must come first", got)
	}
}

func TestORMap_AddWinsAndReset(t *testing.T) {
	a, b := pair(NewORMap)
	ops, _ := a.Update("n", TypeCounter, func(c CRDT) ([]Op, error) { return one(c.(*PNCounter).Add(5)) })
	mustApply(t, b, ops...)
	del, _ := a.Delete("n")
	inc, _ := b.Update("n", TypeCounter, func(c CRDT) ([]Op, error) { return one(c.(*PNCounter).Add(1)) })
	exchange(t, a, b, del, inc)
	// add wins: n stays; the remove reset what it saw (the 5), the concurrent +1 survives.
	if got, want := valueJSON(t, a), `{"n":1}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	del2, _ := b.Delete("n")
	exchange(t, a, b, nil, del2)
	if got := valueJSON(t, a); got != `{}` {
		t.Fatalf("after observed delete: %s, want {}", got)
	}
}

func TestORMap_NestedDocument(t *testing.T) {
	a, b := pair(NewORMap)
	var ops []Op
	o, _ := a.Set("title", "notes")
	ops = append(ops, o)
	more, _ := a.Update("body", TypeRGAText, func(c CRDT) ([]Op, error) {
		return c.(*RGAText).Insert(0, "hello"), nil
	})
	ops = append(ops, more...)
	exchange(t, a, b, roundTrip(t, ops), nil)
	if got, want := valueJSON(t, b), `{"body":"hello","title":"notes"}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	if c, ok := b.Get("body"); !ok || c.(*RGAText).String() != "hello" {
		t.Fatal("Get(body) did not return the text")
	}
}

func TestObject_FieldTypes(t *testing.T) {
	obj, err := NewObject(map[string]string{"tags": TypeGrowOnlySet})
	if err != nil {
		t.Fatal(err)
	}
	obj.Bind(NewHLC("a", nil))
	if _, err := obj.Set("tags", "x"); !errors.Is(err, ErrTypeMismatch) {
		t.Fatalf("Set on a grow_only_set field: err = %v, want ErrTypeMismatch", err)
	}
	bad := Op{ID: OpID{"b", 1}, Kind: OpPut, Key: "tags", Type: TypeCounter,
		Child: &Op{ID: OpID{"b", 1}, Kind: OpInc, Delta: 1}}
	if err := obj.Apply(bad); !errors.Is(err, ErrInvalidOp) {
		t.Fatalf("remote put of the wrong type: err = %v, want ErrInvalidOp", err)
	}
	if _, err := NewObject(map[string]string{"x": "nope"}); !errors.Is(err, ErrUnknownCRDT) {
		t.Fatalf("unknown field crdt: err = %v", err)
	}
}

func TestRegistry(t *testing.T) {
	for _, name := range []string{"lww_register", "mv_register", "rga_text", "grow_only_set",
		"or_map", "counter", "flag", "log_rga", "append_only", "rga_list"} {
		c, err := New(name)
		if err != nil {
			t.Fatalf("New(%q): %v", name, err)
		}
		want := name
		if name == TypeAppendOnly {
			want = TypeLogRGA
		}
		if c.Type() != want {
			t.Errorf("New(%q).Type() = %q, want %q", name, c.Type(), want)
		}
	}
	if _, err := New("yjs_magic"); !errors.Is(err, ErrUnknownCRDT) {
		t.Fatalf("New(unknown): err = %v, want ErrUnknownCRDT", err)
	}
}

func TestContainerDefaults(t *testing.T) {
	for container, want := range map[string]string{
		"object": TypeORMap, "map": TypeORMap, "list": TypeRGAList, "log": TypeLogRGA,
	} {
		got, err := DefaultCRDT(container)
		if err != nil || got != want {
			t.Errorf("DefaultCRDT(%q) = %q, %v; want %q", container, got, err, want)
		}
	}
	if _, err := DefaultCRDT("tree"); !errors.Is(err, ErrUnknownContainer) {
		t.Fatalf("DefaultCRDT(tree): err = %v", err)
	}
	c, err := NewContainer("log", "append_only", nil)
	if err != nil || c.Type() != TypeLogRGA {
		t.Fatalf("NewContainer(log, append_only) = %v, %v", c, err)
	}
	obj, err := NewContainer("object", "", map[string]string{"tags": TypeGrowOnlySet})
	if err != nil || obj.(*ORMap).FieldType("tags") != TypeGrowOnlySet || obj.(*ORMap).FieldType("x") != TypeLWWRegister {
		t.Fatalf("NewContainer(object) field types wrong: %v", err)
	}
}

func TestUnbound_LocalEdit(t *testing.T) {
	if _, err := NewLWWRegister().Set(1); !errors.Is(err, ErrNoClock) {
		t.Fatalf("err = %v, want ErrNoClock", err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("RGAText.Insert without a clock did not panic")
		}
	}()
	NewRGAText().Insert(0, "x")
}

func TestInvalidOps(t *testing.T) {
	id := OpID{"a", 1}
	cases := map[string]Op{
		"lww_register":  {ID: id, Kind: OpSet, Value: json.RawMessage("{bad")},
		"mv_register":   {ID: id, Kind: OpAdd, Value: json.RawMessage("1")},
		"grow_only_set": {ID: id, Kind: OpAdd, Value: json.RawMessage("1 2")},
		"counter":       {Kind: OpInc, Delta: 1},
		"flag":          {ID: id, Kind: OpSet},
		"log_rga":       {ID: id, Kind: OpAppend},
		"or_map":        {ID: id, Kind: OpPut, Key: "k"},
		"rga_list":      {ID: id, Kind: OpInsert, Value: json.RawMessage(`"notarray"`)},
	}
	for name, op := range cases {
		c, _ := New(name)
		if err := c.Apply(op); !errors.Is(err, ErrInvalidOp) {
			t.Errorf("%s.Apply(%+v): err = %v, want ErrInvalidOp", name, op, err)
		}
	}
}

func TestRGAList_Values(t *testing.T) {
	a, b := pair(NewRGAList)
	o1, _ := a.Insert(0, "x", map[string]any{"s": "two\nlines"}, 3)
	o2, _ := a.Delete(0, 1)
	exchange(t, a, b, append(roundTrip(t, o1), o2...), nil)
	if got, want := valueJSON(t, b), `[{"s":"two\nlines"},3]`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestHLC(t *testing.T) {
	now := time.UnixMilli(1000)
	c := NewHLC("a", func() time.Time { return now })
	t1 := c.Now()
	t2 := c.Now() // same millisecond: logical ticks
	if t2.Compare(t1) <= 0 || t2.Wall != 1000 || t2.Logical != 1 {
		t.Fatalf("same-ms readings %+v then %+v", t1, t2)
	}
	remote := Timestamp{Wall: 5000, Logical: 7, Replica: "b"}
	t3 := c.Update(remote) // remote clock is ahead: follow it
	if t3.Compare(remote) <= 0 || t3.Wall != 5000 || t3.Logical != 8 {
		t.Fatalf("Update(%+v) = %+v", remote, t3)
	}
	now = time.UnixMilli(9000)
	if t4 := c.Now(); t4.Wall != 9000 || t4.Logical != 0 {
		t.Fatalf("wall clock moved past: %+v", t4)
	}
	id1, _ := c.stamp(3, Timestamp{}, 0)
	id2, _ := c.stamp(1, Timestamp{}, 40)
	if id1.Counter != 1 || id2.Counter != 41 || c.Counter() != 41 {
		t.Fatalf("op counters %v %v (counter %d)", id1, id2, c.Counter())
	}
}

func TestTimestamp_TotalOrder(t *testing.T) {
	a := Timestamp{Wall: 1, Logical: 2, Replica: "a"}
	for _, tc := range []struct {
		b    Timestamp
		want int
	}{
		{Timestamp{Wall: 1, Logical: 2, Replica: "a"}, 0},
		{Timestamp{Wall: 1, Logical: 2, Replica: "b"}, -1},
		{Timestamp{Wall: 1, Logical: 3, Replica: "a"}, -1},
		{Timestamp{Wall: 0, Logical: 9, Replica: "z"}, 1},
	} {
		if got := a.Compare(tc.b); got != tc.want {
			t.Errorf("Compare(%+v) = %d, want %d", tc.b, got, tc.want)
		}
	}
}

func TestOp_JSONFieldNames(t *testing.T) {
	op := Op{ID: OpID{"r1", 7}, TS: Timestamp{Wall: 1, Logical: 0, Replica: "r1"}, Kind: OpInsert,
		Text: "hi", Ref: OpID{"r2", 3}}
	b, _ := json.Marshal(op)
	want := `{"id":{"replica":"r1","counter":7},"ts":{"wall":1,"logical":0,"replica":"r1"},` +
		`"kind":"insert","text":"hi","ref":{"replica":"r2","counter":3}}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
}

func TestLogRGA_AppendAfterMergeSortsLast(t *testing.T) {
	ahead := NewLogRGA()
	ahead.Bind(NewHLC("b", func() time.Time { return time.UnixMilli(1_000_000) }))
	ahead.Append("from the future")
	l := NewLogRGA()
	l.Bind(NewHLC("a", func() time.Time { return time.UnixMilli(5) }))
	l.Merge(ahead)
	l.Append("after merge")
	v := l.Value().([]json.RawMessage)
	if string(v[len(v)-1]) != `"after merge"` {
		t.Fatalf("append after merge sorted before what it saw: %s", v)
	}
}
