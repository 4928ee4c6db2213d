package state_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/agentd/state/store"
)

func TestRestart_DocumentsEqual(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	rt := openRuntime(t, dir, state.Options{})
	for _, s := range []string{prefsSchema, todoSchema, eventsSchema} {
		mustRegister(t, rt, capKV, s)
	}
	kv, nc, cc := caller(agentA1, owner1, capKV), caller(agentA1, owner1, capNote), caller(agentA1, owner1, capCard)
	type ref struct {
		c       state.Caller
		uri, id string
	}
	refs := []ref{{nc, noteURI, id1}, {cc, cardURI, "c"}, {kv, prefsURI, "p"}, {kv, todoURI, "t"}, {kv, eventsURI, "l"}}
	must[*state.Document](t)(rt.Create(ctx, nc, noteURI, note(id1, "t", "hello world", "a")))
	must[*state.Document](t)(rt.Update(ctx, nc, noteURI, id1, []byte(`[{"op":"replace","path":"/body","value":"hello brave world"},{"op":"add","path":"/tags/-","value":"b"}]`)))
	must[*state.Document](t)(rt.Create(ctx, cc, cardURI, []byte(`{"id":"c","title":"t","views":2,"steps":["x","y"],"meta":{"k":{"a":1}},"status":"s"}`)))
	must[*state.Document](t)(rt.Update(ctx, cc, cardURI, "c", []byte(`{"$inc":{"views":3},"$push":{"events":1}}`)))
	must[*state.Document](t)(rt.Create(ctx, kv, prefsURI, []byte(`{"id":"p","items":{"a":{"v":"1"}}}`)))
	must[*state.Document](t)(rt.Create(ctx, kv, todoURI, []byte(`{"id":"t","name":"n","items":[{"text":"a"}]}`)))
	must[*state.Document](t)(rt.Create(ctx, kv, eventsURI, []byte(`{"id":"l","entries":[{"e":1}]}`)))
	before := map[string]string{}
	for _, r := range refs {
		before[r.uri] = string(must[*state.Document](t)(rt.Get(ctx, r.c, r.uri, r.id)).Object)
	}
	replica := rt.Store().Replica()
	rt.Close(ctx)

	rt = openRuntime(t, dir, state.Options{})
	if rt.Store().Replica() != replica {
		t.Fatal("replica id changed across restart")
	}
	for _, r := range refs {
		if got := string(must[*state.Document](t)(rt.Get(ctx, r.c, r.uri, r.id)).Object); got != before[r.uri] {
			t.Errorf("%s after restart: %s, want %s", r.uri, got, before[r.uri])
		}
	}
	// CRDTs rebuild from the log: edits continue, and new op ids do not
	// collide with ids used before the restart.
	d := must[*state.Document](t)(rt.Update(ctx, nc, noteURI, id1, []byte(`[{"op":"replace","path":"/body","value":"hello brave new world"}]`)))
	if object(t, d)["body"] != "hello brave new world" {
		t.Fatalf("body %v", object(t, d)["body"])
	}
	must[*state.Document](t)(rt.Create(ctx, nc, noteURI, note(id2, "second", "text")))
	seen := map[string]string{}
	ops := must[[]store.Envelope](t)(rt.Store().OpsSince(ctx, "cap_note", 0, 10000))
	for _, e := range ops {
		if e.Op.ID.Replica != replica {
			continue
		}
		if prev, dup := seen[e.OpID()]; dup {
			t.Fatalf("op id %s used by %s and %s", e.OpID(), prev, e.Doc)
		}
		seen[e.OpID()] = e.Doc
	}
}

func TestStore_CrashSafetySettings(t *testing.T) {
	ctx := context.Background()
	rt := openRuntime(t, "", state.Options{})
	db := rt.Store().DB()
	var mode string
	var sync, busy int
	if err := db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q (%v)", mode, err)
	}
	if err := db.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&sync); err != nil || sync != 2 {
		t.Errorf("synchronous = %d (%v), want 2 (FULL)", sync, err)
	}
	if err := db.QueryRowContext(ctx, `PRAGMA busy_timeout`).Scan(&busy); err != nil || busy < 1000 {
		t.Errorf("busy_timeout = %d (%v)", busy, err)
	}
	// A refused write leaves nothing behind, and the cached CRDT stays
	// consistent with the log.
	c := caller(agentA1, owner1, capNote)
	must[*state.Document](t)(rt.Create(ctx, c, noteURI, note(id1, "t", "body")))
	count := func() (n int) {
		db.QueryRow(`SELECT count(*) FROM cap_note_ops`).Scan(&n)
		return n
	}
	n := count()
	_, err := rt.Update(ctx, c, noteURI, id1, []byte(`[{"op":"replace","path":"/body","value":"changed"},{"op":"replace","path":"/title","value":7}]`))
	wantCode(t, err, state.CodeInvalidInput)
	if count() != n {
		t.Fatal("a refused update logged ops")
	}
	d := must[*state.Document](t)(rt.Update(ctx, c, noteURI, id1, []byte(`{"$set":{"title":"u"}}`)))
	if o := object(t, d); o["body"] != "body" || o["title"] != "u" {
		t.Fatalf("after refusal: %v", o)
	}
}

func TestReplication_TwoReplicasConverge(t *testing.T) {
	ctx := context.Background()
	a := openRuntime(t, "", state.Options{Replica: "replica-a"})
	b := openRuntime(t, "", state.Options{Replica: "replica-b"})
	c := caller(agentA1, owner1, capNote)
	cursors := map[*state.Runtime]map[string]int64{a: {}, b: {}}
	sync := func(from, to *state.Runtime) {
		t.Helper()
		for _, ns := range must[[]string](t)(from.Store().Namespaces(ctx)) {
			envs := must[[]store.Envelope](t)(from.Store().OpsSince(ctx, ns, cursors[from][ns], 1000))
			if len(envs) > 0 {
				cursors[from][ns] = envs[len(envs)-1].Seq
			}
			if _, err := to.Store().ApplyRemote(ctx, envs); err != nil {
				t.Fatal(err)
			}
		}
		cursors[from] = map[string]int64{} // resend everything next time: redelivery must be harmless
	}
	must[*state.Document](t)(a.Create(ctx, c, noteURI, note(id1, "draft", "The quick fox.", "x")))
	sync(a, b)
	must[*state.Document](t)(b.Get(ctx, c, noteURI, id1))

	// Concurrent edits of the same note on both replicas.
	must[*state.Document](t)(a.Update(ctx, c, noteURI, id1, []byte(`[{"op":"replace","path":"/body","value":"The quick brown fox."},{"op":"add","path":"/tags/-","value":"a"},{"op":"replace","path":"/title","value":"from a"}]`)))
	must[*state.Document](t)(b.Update(ctx, c, noteURI, id1, []byte(`[{"op":"replace","path":"/body","value":"The quick fox jumps."},{"op":"add","path":"/tags/-","value":"b"},{"op":"replace","path":"/title","value":"from b"}]`)))
	sync(a, b)
	sync(b, a)
	sync(a, b) // duplicates
	da := must[*state.Document](t)(a.Get(ctx, c, noteURI, id1))
	db := must[*state.Document](t)(b.Get(ctx, c, noteURI, id1))
	if string(da.Object) != string(db.Object) || da.UpdatedAt != db.UpdatedAt {
		t.Fatalf("diverged:\n a %s\n b %s", da.Object, db.Object)
	}
	o := object(t, da)
	if o["body"] != "The quick brown fox jumps." || js(o["tags"]) != `["a","b","x"]` || o["title"] != "from b" {
		t.Fatalf("merged %v", o)
	}
	// A tombstone and a hard delete replicate too.
	must[*state.Document](t)(b.Create(ctx, c, noteURI, note(id2, "gone", "soon")))
	sync(b, a)
	if err := a.Delete(ctx, c, noteURI, id1, "tombstone"); err != nil {
		t.Fatal(err)
	}
	if err := a.Delete(ctx, c, noteURI, id2, "hard"); err != nil {
		t.Fatal(err)
	}
	sync(a, b)
	for _, id := range []string{id1, id2} {
		_, err := b.Get(ctx, c, noteURI, id)
		wantCode(t, err, state.CodeNotFound)
	}
	var left int
	b.Store().DB().QueryRow(`SELECT count(*) FROM cap_note_ops WHERE doc_id = ? AND action != 'purge'`, id2).Scan(&left)
	if left != 0 {
		t.Fatalf("%d ops of the purged note left on b", left)
	}
}

func TestReplication_OutOfOrderAndUnknown(t *testing.T) {
	ctx := context.Background()
	a := openRuntime(t, "", state.Options{Replica: "ra"})
	b := openRuntime(t, "", state.Options{Replica: "rb"})
	c := caller(agentA1, owner1, capNote)
	must[*state.Document](t)(a.Create(ctx, c, noteURI, note(id1, "t", "abc")))
	for i := range 10 {
		must[*state.Document](t)(a.Update(ctx, c, noteURI, id1, []byte(fmt.Sprintf(`[{"op":"add","path":"/tags/-","value":"t%d"}]`, i))))
		must[*state.Document](t)(a.Update(ctx, c, noteURI, id1, []byte(fmt.Sprintf(`[{"op":"replace","path":"/body","value":"abc %d"}]`, i))))
	}
	envs := must[[]store.Envelope](t)(a.Store().OpsSince(ctx, "cap_note", 0, 1000))
	for i, j := 0, len(envs)-1; i < j; i, j = i+1, j-1 {
		envs[i], envs[j] = envs[j], envs[i]
	}
	envs = append(envs, store.Envelope{Schema: "did:nuwa:state:unknown#v1", Doc: "x", Action: "op", Op: envs[0].Op})
	_, err := b.Store().ApplyRemote(ctx, envs)
	if err == nil {
		t.Fatal("unknown schema not reported")
	}
	da := must[*state.Document](t)(a.Get(ctx, c, noteURI, id1))
	db := must[*state.Document](t)(b.Get(ctx, c, noteURI, id1))
	if string(da.Object) != string(db.Object) {
		t.Fatalf("reverse-order delivery diverged:\n a %s\n b %s", da.Object, db.Object)
	}
}

func TestRuntime_ConcurrentUse(t *testing.T) {
	ctx := context.Background()
	rt := openRuntime(t, "", state.Options{})
	c := caller(agentA1, owner1, capCard)
	must[*state.Document](t)(rt.Create(ctx, c, cardURI, []byte(`{"id":"shared","title":"t","views":0}`)))
	const workers, each = 4, 10
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			var err error
			for i := 0; i < each && err == nil; i++ {
				_, err = rt.Update(ctx, c, cardURI, "shared", []byte(fmt.Sprintf(`[{"op":"$inc","path":"/views","value":1},{"op":"add","path":"/tags/-","value":"w%d-%d"}]`, w, i)))
				if err == nil {
					_, err = rt.Create(ctx, c, cardURI, []byte(fmt.Sprintf(`{"id":"w%d-%d","title":"x"}`, w, i)))
				}
				if err == nil {
					_, err = rt.Query(ctx, c, []byte(`{"from":"did:nuwa:state:card#v1","limit":5}`))
				}
			}
			errs <- err
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	d := must[*state.Document](t)(rt.Get(ctx, c, cardURI, "shared"))
	if o := object(t, d); o["views"] != float64(workers*each) || len(o["tags"].([]any)) != workers*each {
		t.Fatalf("views %v, %d tags", o["views"], len(o["tags"].([]any)))
	}
}
