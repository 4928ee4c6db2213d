package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/state/crdt"
	"github.com/agentnode/agentnode/agentd/state/schema"
)

const testSchema = `{"$id":"did:nuwa:state:doc#v1","type":"object","x-asm":{"x-compression":"gzip"},
 "properties":{"title":{"type":"string"},"body":{"type":"string","x-crdt":"rga_text"},"n":{"type":"integer","x-crdt":"counter"}}}`

func openTest(t *testing.T, dir string, replica crdt.ReplicaID) (*Store, *schema.Schema) {
	t.Helper()
	reg := schema.NewRegistry()
	sch, err := reg.Register([]byte(testSchema), "did:nuwa:cap:t@1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), Config{Dir: dir, Schemas: reg, Replica: replica})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s, sch
}

// set writes a title (creating the document on first use).
func set(ctx context.Context, s *Store, sch *schema.Schema, id, title string) (*Doc, error) {
	return s.Write(ctx, sch, id, func(t *Txn) error {
		if !t.Exists() {
			t.Create(Meta{Scope: "sc", Owner: "o", Agent: "a"})
		}
		op, err := t.Root().Set("title", title)
		t.Record(op)
		return err
	})
}

func count(t *testing.T, s *Store, table string) int {
	var n int
	if err := s.DB().QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestStore_FailedCommitLeavesNothing(t *testing.T) {
	ctx := context.Background()
	s, sch := openTest(t, t.TempDir(), "r")
	if _, err := set(ctx, s, sch, "d", "one"); err != nil {
		t.Fatal(err)
	}
	ops, docs := count(t, s, "cap_t_ops"), count(t, s, "cap_t_docs")
	boom := errors.New("boom")
	testHookBeforeCommit = func() error { return boom }
	_, err := set(ctx, s, sch, "d", "two")
	_, err2 := set(ctx, s, sch, "e", "new")
	testHookBeforeCommit = nil
	if !errors.Is(err, boom) || !errors.Is(err2, boom) {
		t.Fatalf("errs %v, %v", err, err2)
	}
	if count(t, s, "cap_t_ops") != ops || count(t, s, "cap_t_docs") != docs {
		t.Fatal("a rolled-back write left rows")
	}
	d, err := s.Get(ctx, sch, "d", Filter{})
	if err != nil || string(d.Value) != `{"title":"one"}` {
		t.Fatalf("doc %s (%v)", d.Value, err)
	}
	// The in-memory CRDT was dropped with the failed write: the next write
	// starts from the log, not from "two".
	d, err = s.Write(ctx, sch, "d", func(t *Txn) error {
		v, err := t.Value()
		if v["title"] != "one" {
			return errors.New("stale CRDT after rollback")
		}
		op, _ := t.Root().Update("n", "", func(c crdt.CRDT) ([]crdt.Op, error) {
			o, err := c.(*crdt.PNCounter).Add(1)
			return []crdt.Op{o}, err
		})
		t.Record(op...)
		return err
	})
	if err != nil || string(d.Value) != `{"n":1,"title":"one"}` {
		t.Fatalf("after rollback: %s (%v)", d.Value, err)
	}
}

func TestStore_ApplyRemote(t *testing.T) {
	ctx := context.Background()
	a, sch := openTest(t, t.TempDir(), "a")
	b, _ := openTest(t, t.TempDir(), "b")
	set(ctx, a, sch, "d", "one")
	set(ctx, a, sch, "d", "two")
	envs, err := a.OpsSince(ctx, "cap_t", 0, 100)
	if err != nil || len(envs) != 3 {
		t.Fatalf("%d envs (%v)", len(envs), err)
	}
	if n, err := b.ApplyRemote(ctx, envs); n != 3 || err != nil {
		t.Fatalf("applied %d (%v)", n, err)
	}
	if n, err := b.ApplyRemote(ctx, envs); n != 0 || err != nil {
		t.Fatalf("reapplied %d (%v)", n, err)
	}
	// Malformed and far-future ops are refused, the rest still applies.
	future := envs[2]
	future.Op.ID.Counter, future.Op.TS.Wall = 999, time.Now().Add(48*time.Hour).UnixMilli()
	bad := envs[2]
	bad.Action = "explode"
	ok := envs[2]
	ok.Doc = "other"
	n, err := b.ApplyRemote(ctx, []Envelope{future, bad, ok})
	if n != 1 || !errors.Is(err, ErrInvalidEnvelope) {
		t.Fatalf("applied %d (%v)", n, err)
	}
	// A purge drops the document; ops stamped before it stay dropped.
	if err := a.Purge(ctx, sch, "d", func(Meta, bool) error { return nil }); err != nil {
		t.Fatal(err)
	}
	purge, _ := a.OpsSince(ctx, "cap_t", envs[2].Seq, 100)
	if len(purge) != 1 || purge[0].Action != ActionPurge {
		t.Fatalf("after purge: %+v", purge)
	}
	if _, err := b.ApplyRemote(ctx, append(purge, envs...)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, sch, "d", Filter{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("purged doc: %v", err)
	}
	// A re-creation after the purge is a new document.
	set(ctx, a, sch, "d", "reborn")
	again, _ := a.OpsSince(ctx, "cap_t", purge[0].Seq, 100)
	b.ApplyRemote(ctx, again)
	if d, err := b.Get(ctx, sch, "d", Filter{}); err != nil || string(d.Value) != `{"title":"reborn"}` {
		t.Fatalf("reborn: %v", err)
	}
}

func TestCompress_RoundTrip(t *testing.T) {
	data := bytes.Repeat([]byte(`{"op":"append","value":"hello world"},`), 500)
	for _, codec := range []string{schema.Brotli, schema.Zstd, schema.Gzip, CodecNone} {
		c, err := Compress(codec, data)
		if err != nil {
			t.Fatal(codec, err)
		}
		if codec != CodecNone && len(c)*10 > len(data) {
			t.Errorf("%s: %d -> %d bytes", codec, len(data), len(c))
		}
		d, err := Decompress(codec, c)
		if err != nil || !bytes.Equal(d, data) {
			t.Fatalf("%s: round trip failed (%v)", codec, err)
		}
	}
	if _, err := Compress("lz4", data); err == nil || !strings.Contains(err.Error(), "codec") {
		t.Errorf("unknown codec: %v", err)
	}
}

func TestStore_SnapshotAndRebuild(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, sch := openTest(t, dir, "r")
	for _, title := range []string{"a", "b", "c"} {
		set(ctx, s, sch, "d", title)
	}
	info, err := s.Snapshot(ctx, sch, "d")
	if err != nil || info.Ops != 4 || info.Codec != "gzip" {
		t.Fatalf("snapshot %+v (%v)", info, err)
	}
	set(ctx, s, sch, "d", "d")
	s.Close(ctx)
	s, _ = openTest(t, dir, "r")
	h, err := s.History(ctx, sch, "d")
	if err != nil || len(h) != 5 {
		t.Fatalf("history %d (%v)", len(h), err)
	}
	d, err := set(ctx, s, sch, "d", "e")
	if err != nil || string(d.Value) != `{"title":"e"}` {
		t.Fatalf("after rebuild %s (%v)", d.Value, err)
	}
}

// decoded gives what the JSON round trip gives.
func TestDecoded_MatchesRoundTrip(t *testing.T) {
	for _, v := range []any{
		map[string]any{"a": "x<&>\u2028", "b": json.Number("1.50"), "c": []any{int64(3), 2.5, true, nil, "bad\xffutf8"},
			"d": json.RawMessage(`{"k":[1,"v"]}`), "d2": json.RawMessage(" \"<a\\u0026b\xff\" "), "e": map[string]any{"bad\xff": 1}, "f": []string{"s"}, "g": uint64(7)},
		map[string]any{},
	} {
		got, err := decoded(v)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(v)
		want, _ := schema.DecodeJSON(raw)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decoded %v\n got %#v\nwant %#v", v, got, want)
		}
	}
}
