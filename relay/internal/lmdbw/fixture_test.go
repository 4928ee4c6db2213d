package lmdbw

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/PowerDNS/lmdb-go/lmdb"
	eslmdb "github.com/fiatjaf/eventstore/lmdb"
	"github.com/nbd-wtf/go-nostr"
)

// fixtureDir holds a store written by the writer as it was at commit
// 7851509 (eventstore/lmdb's environment, opened through lmdbw.Init), with
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
	b := &eslmdb.LMDBBackend{Path: dir, MapSize: 1 << 20}
	if err := Init(b); err != nil {
		t.Fatal(err)
	}
	w, err := Open(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, ops := range fixtureOps(t) {
		if err := w.Commit(ops); err != nil {
			t.Fatal(err)
		}
	}
	layout := dump(t, b)
	var lines []string
	err = w.env.View(func(txn *lmdb.Txn) error {
		return eachRaw(t.Context(), txn, w.dbis.raw, func(evt *nostr.Event) error {
			j, err := json.Marshal(evt)
			lines = append(lines, string(j))
			return err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
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
