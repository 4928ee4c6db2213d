package lmdbw

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/nbd-wtf/go-nostr"
)

// fixtureDir holds a store written by this package as it was at commit
// 7851509, when the environment was eventstore/lmdb's (opened by its Init
// and reached by reflection), with
// layout.txt (every key and value of every database) and events.jsonl (the
// stored events in storage order). Regenerate only on purpose:
//
//	LMDBW_WRITE_FIXTURE=1 go test -tags libsecp256k1 -run TestFixture_Write ./relay/internal/lmdbw/
const fixtureDir = "testdata/v9store"

// fixtureOps are deterministic ops touching every index and every action.
func fixtureOps(t *testing.T) [][]*Op {
	sk := strings.Repeat("1", 63) + "2"
	other := strings.Repeat("3", 63) + "4"
	opk, _ := nostr.GetPublicKey(other)
	pk, _ := nostr.GetPublicKey(sk)
	long := strings.Repeat("x", 120)
	note := signed(t, sk, 1, 1000, nostr.Tags{{"p", opk}, {"e", opk}, {"t", "go"}, {"t", long}}, "hello")
	gone := signed(t, sk, 1, 1001, nil, "deleted by a kind 5")
	removed := signed(t, other, 1, 1002, nil, "removed by a Delete op")
	art1 := signed(t, other, 30023, 1003, nostr.Tags{{"d", "slug"}, {"p", pk}}, "v1")
	art2 := signed(t, other, 30023, 1004, nostr.Tags{{"d", "slug"}, {"p", pk}}, "v2")
	return [][]*Op{
		{
			{Action: Save, Event: note},
			{Action: Save, Event: gone},
			{Action: Save, Event: removed},
			{Action: Replace, Event: art1},
			{Action: Replace, Event: signed(t, other, 0, 1005, nostr.Tags{{"bot"}}, `{"name":"n"}`)},
			{Action: Save, Event: signed(t, sk, 4129, 1006, nostr.Tags{{"title", "a lesson"}, {"a", "30023:" + opk + ":slug"}, {"x"}, {}}, "text")},
		},
		{
			{Action: Replace, Event: art2},
			{Action: Save, Event: signed(t, sk, 5, 1007, nostr.Tags{{"e", gone.ID}}, "")},
			{Action: Delete, Event: removed},
			{Action: Save, Event: signed(t, sk, 7, 1008, nostr.Tags{{"e", note.ID}, {"p", opk}}, "+")},
			{Action: Save, Event: signed(t, other, 1059, 1009, nostr.Tags{{"p", pk}}, "wrapped")},
		},
	}
}

// TestFixture_Write writes the fixture (only when LMDBW_WRITE_FIXTURE is set).
func TestFixture_Write(t *testing.T) {
	if os.Getenv("LMDBW_WRITE_FIXTURE") == "" {
		t.Skip("set LMDBW_WRITE_FIXTURE=1 to rewrite " + fixtureDir)
	}
	dir := t.TempDir()
	w := openAt(t, dir, 1<<20)
	for _, ops := range fixtureOps(t) {
		if err := w.Commit(ops); err != nil {
			t.Fatal(err)
		}
	}
	layout := dump(t, w)
	var lines []string
	err := w.env.View(func(txn *lmdb.Txn) error {
		return eachRaw(t.Context(), txn, w.dbis.raw, func(evt *nostr.Event) error {
			j, err := json.Marshal(evt)
			lines = append(lines, string(j))
			return err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	closeWriter(t, w)
	data, err := os.ReadFile(filepath.Join(dir, "data.mdb"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(fixtureDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"data.mdb":     string(data),
		"layout.txt":   strings.Join(layout, "\n") + "\n",
		"events.jsonl": strings.Join(lines, "\n") + "\n",
	} {
		if err := os.WriteFile(filepath.Join(fixtureDir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Printf("fixture: %d bytes, %d entries, %d events\n", len(data), len(layout), len(lines))
}

// TestFixture_OpensAndReadsTheSame opens a copy of the fixture: opening
// changes no key or value, every event is read back as it was stored (in
// storage order, by the reader, and by eventstore's QueryEvents after a
// write), and a new record gets the serial after the last.
func TestFixture_OpensAndReadsTheSame(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join(fixtureDir, "data.mdb"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data.mdb"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	w := openAt(t, dir, 0)
	if got, want := strings.Join(dump(t, w), "\n")+"\n", readFixture(t, "layout.txt"); got != want {
		t.Fatalf("layout after open:\n%s\nwant:\n%s", got, want)
	}
	want := fixtureEvents(t)
	var got []string
	err = w.env.View(func(txn *lmdb.Txn) error {
		return eachRaw(t.Context(), txn, w.dbis.raw, func(evt *nostr.Event) error {
			got = append(got, evt.String())
			return nil
		})
	})
	if err != nil || strings.Join(got, "\n") != strings.Join(jsonOf(want), "\n") {
		t.Fatalf("stored events (%v):\n%s\nwant:\n%s", err, strings.Join(got, "\n"), strings.Join(jsonOf(want), "\n"))
	}
	for _, evt := range want {
		if q := query(t, w, nostr.Filter{Kinds: []int{evt.Kind}, Authors: []string{evt.PubKey}}); len(q) == 0 || !containsID(q, evt.ID) {
			t.Fatalf("the reader misses %s", evt)
		}
	}
	extra := signed(t, strings.Repeat("5", 63)+"6", 1, 3000, nil, "after the fixture")
	assertSerial(t, w, extra, lastSerial(t, readFixture(t, "layout.txt"))+1)
	closeWriter(t, w)
	es := eventstoreQuery(t, dir, []nostr.Filter{{Limit: 100}})[0]
	if len(es) != len(want)+1 || es[0].ID != extra.ID {
		t.Fatalf("eventstore reads %d events, want %d with %s first", len(es), len(want)+1, extra.ID)
	}
	for _, evt := range want {
		if !containsID(es, evt.ID) {
			t.Fatalf("eventstore misses %s", evt)
		}
	}
}

func readFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func fixtureEvents(t *testing.T) []*nostr.Event {
	t.Helper()
	var out []*nostr.Event
	for _, line := range strings.Split(strings.TrimSpace(readFixture(t, "events.jsonl")), "\n") {
		evt := &nostr.Event{}
		if err := json.Unmarshal([]byte(line), evt); err != nil {
			t.Fatal(err)
		}
		out = append(out, evt)
	}
	return out
}

func jsonOf(evts []*nostr.Event) []string {
	out := make([]string, len(evts))
	for i, evt := range evts {
		out[i] = evt.String()
	}
	return out
}

// lastSerial is the highest raw key in a layout dump.
func lastSerial(t *testing.T, layout string) uint32 {
	t.Helper()
	var last uint32
	for _, line := range strings.Split(layout, "\n") {
		var k uint32
		if _, err := fmt.Sscanf(line, "raw %08x ", &k); err == nil && k > last {
			last = k
		}
	}
	if last == 0 {
		t.Fatal("no raw record in the layout")
	}
	return last
}
