package state_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/agentd/state"
)

func TestPermissions_PerVerb(t *testing.T) {
	ctx := context.Background()
	rt := openRuntime(t, "", state.Options{})
	full := caller(agentA1, owner1, capNote)
	must[*state.Document](t)(rt.Create(ctx, full, noteURI, note(id1, "t", "b")))
	calls := map[string]func(state.Caller) error{
		state.VerbCreate: func(c state.Caller) error { _, err := rt.Create(ctx, c, noteURI, note(id2, "t", "b")); return err },
		state.VerbUpdate: func(c state.Caller) error {
			_, err := rt.Update(ctx, c, noteURI, id1, []byte(`{"$set":{"title":"x"}}`))
			return err
		},
		state.VerbQuery: func(c state.Caller) error {
			_, err := rt.Query(ctx, c, []byte(fmt.Sprintf(`{"from":%q}`, noteURI)))
			return err
		},
		state.VerbDelete: func(c state.Caller) error { return rt.Delete(ctx, c, noteURI, id1, "tombstone") },
	}
	reads := map[string]func(state.Caller) error{
		"get":     func(c state.Caller) error { _, err := rt.Get(ctx, c, noteURI, id1); return err },
		"history": func(c state.Caller) error { _, err := rt.History(ctx, c, noteURI, id1); return err },
	}
	for _, missing := range state.AllVerbs {
		c := full
		c.Verbs = slices.DeleteFunc(slices.Clone(state.AllVerbs), func(v string) bool { return v == missing })
		err := calls[missing](c)
		wantCode(t, err, state.CodePermissionDenied)
		if !strings.Contains(err.Error(), missing) {
			t.Errorf("%s: error %q does not name the verb", missing, err)
		}
		if missing == state.VerbQuery {
			for name, read := range reads {
				if err := read(c); err == nil {
					t.Errorf("%s without state.query: no error", name)
				}
			}
		}
	}
	c := state.CallerFromACP(agentA1, owner1, capNote, "sc:test", []string{"state.create", "state.update", "state.query"})
	wantCode(t, rt.Delete(ctx, c, noteURI, id1, "hard"), state.CodePermissionDenied)
	_, err := rt.Get(ctx, state.Caller{Agent: agentA1, Verbs: state.AllVerbs}, noteURI, id1)
	wantCode(t, err, state.CodePermissionDenied) // no owner
}

func TestSizeLimit(t *testing.T) {
	ctx := context.Background()
	rt := openRuntime(t, "", state.Options{MaxObjectSize: 1024})
	c := caller(agentA1, owner1, capNote)
	big := strings.Repeat("x", 2000)
	_, err := rt.Create(ctx, c, noteURI, note(id1, "big", big))
	wantCode(t, err, state.CodeTooLarge)
	must[*state.Document](t)(rt.Create(ctx, c, noteURI, note(id1, "small", "b")))
	_, err = rt.Update(ctx, c, noteURI, id1, []byte(`[{"op":"replace","path":"/body","value":"`+strings.Repeat("y", 1000)+`"}]`))
	wantCode(t, err, state.CodeTooLarge) // the patch is small enough, the result is not
	large := c
	large.Large = true
	d := must[*state.Document](t)(rt.Create(ctx, large, noteURI, note(id2, "big", big)))
	if d.Size < 2000 {
		t.Fatalf("size %d", d.Size)
	}
	must[*state.Document](t)(rt.Update(ctx, large, noteURI, id2, []byte(`{"$set":{"title":"bigger"}}`)))
	if c := state.CallerFromACP("a", "o", capNote, "sc", []string{"storage.large"}); !c.Large {
		t.Error("CallerFromACP ignores storage.large")
	}
}

func TestNamespaceIsolation(t *testing.T) {
	ctx := context.Background()
	rt := openRuntime(t, "", state.Options{})
	a := caller(agentA1, owner1, "did:nuwa:cap:capa@1.0.0")
	b := caller(agentA1, owner1, "did:nuwa:cap:capb@2.0.0")
	aSchema := strings.Replace(noteSchema, "did:nuwa:state:note#v1", "did:nuwa:state:memo#v1", 1)
	mustRegister(t, rt, "did:nuwa:cap:capa@1.0.0", aSchema)
	const memo = "did:nuwa:state:memo#v1"
	must[*state.Document](t)(rt.Create(ctx, a, memo, note(id1, "secret of A", "b")))

	_, err := rt.Get(ctx, b, memo, id1)
	wantCode(t, err, state.CodePermissionDenied)
	_, err = rt.Query(ctx, b, []byte(fmt.Sprintf(`{"from":%q}`, memo)))
	wantCode(t, err, state.CodePermissionDenied)
	_, err = rt.Create(ctx, b, memo, note(id2, "t", "b"))
	wantCode(t, err, state.CodePermissionDenied)
	_, err = rt.Update(ctx, b, memo, id1, []byte(`{"$set":{"title":"x"}}`))
	wantCode(t, err, state.CodePermissionDenied)
	wantCode(t, rt.Delete(ctx, b, memo, id1, "hard"), state.CodePermissionDenied)
	// B cannot take A's URI, nor declare state in A's cap namespace.
	_, err = rt.Register(ctx, "did:nuwa:cap:capb@2.0.0", []byte(aSchema))
	wantCode(t, err, state.CodeConflict)
	_, err = rt.Register(ctx, "did:nuwa:cap:capb@2.0.0", []byte(`{"$id":"did:nuwa:cap:capa:state:X#v1"}`))
	wantCode(t, err, state.CodeInvalidInput)
	// B's own memo lives in B's tables.
	bSchema := strings.Replace(noteSchema, "did:nuwa:state:note#v1", "did:nuwa:cap:capb:state:memo#v1", 1)
	mustRegister(t, rt, "did:nuwa:cap:capb@2.0.0", bSchema)
	must[*state.Document](t)(rt.Create(ctx, b, "did:nuwa:cap:capb:state:memo#v1", note(id1, "B's", "b")))
	db := rt.Store().DB()
	for table, want := range map[string]int{"cap_capa_docs": 1, "cap_capb_docs": 1} {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil || n != want {
			t.Errorf("%s: %d rows (%v), want %d", table, n, err, want)
		}
	}
	res := must[*state.QueryResult](t)(rt.Query(ctx, b, []byte(`{"from":"did:nuwa:cap:capb:state:memo#v1"}`)))
	if len(res.Rows) != 1 || res.Rows[0]["title"] != "B's" {
		t.Fatalf("B sees %v", res.Rows)
	}
	// The owner, acting directly (no capability), reaches both.
	o := state.Caller{Owner: owner1, Verbs: state.AllVerbs}
	must[*state.Document](t)(rt.Get(ctx, o, memo, id1))
}

func TestVisibility_Matrix(t *testing.T) {
	ctx := context.Background()
	rt := openRuntime(t, "", state.Options{})
	const capVis = "did:nuwa:cap:vis@1.0.0"
	for _, v := range []string{"private", "shared", "public"} {
		mustRegister(t, rt, capVis, fmt.Sprintf(`{"$id":"did:nuwa:state:%s#v1","type":"object","x-asm":{"x-visibility":%q},"properties":{"t":{"type":"string"}}}`, v, v))
	}
	writer := caller(agentA1, owner1, capVis)
	readers := map[string]state.Caller{
		"same agent":        writer,
		"sibling agent":     caller(agentA2, owner1, capVis),
		"other owner agent": caller(agentB1, owner2, capVis),
		"owner":             {Owner: owner1, Verbs: state.AllVerbs},
		"owner as agent":    caller(owner1, owner1, capVis),
	}
	want := map[string]map[string]bool{
		"private": {"same agent": true, "sibling agent": false, "other owner agent": false, "owner": true, "owner as agent": true},
		"shared":  {"same agent": true, "sibling agent": true, "other owner agent": false, "owner": true, "owner as agent": true},
		"public":  {"same agent": true, "sibling agent": true, "other owner agent": true, "owner": true, "owner as agent": true},
	}
	for v := range want {
		must[*state.Document](t)(rt.Create(ctx, writer, "did:nuwa:state:"+v+"#v1", []byte(`{"id":"d","t":"x"}`)))
	}
	for v, row := range want {
		uri := "did:nuwa:state:" + v + "#v1"
		for who, ok := range row {
			c := readers[who]
			_, err := rt.Get(ctx, c, uri, "d")
			res, qerr := rt.Query(ctx, c, []byte(fmt.Sprintf(`{"from":%q}`, uri)))
			if qerr != nil {
				t.Fatal(qerr)
			}
			if got := err == nil; got != ok || (len(res.Rows) == 1) != ok {
				t.Errorf("%s read by %s: get %v (%v), query %d rows; want %v", v, who, got, err, len(res.Rows), ok)
			}
			if !ok {
				wantCode(t, err, state.CodeNotFound)
			}
		}
	}
	// Writes: another owner's public document is read-only; invisible is not found.
	_, err := rt.Update(ctx, readers["other owner agent"], "did:nuwa:state:public#v1", "d", []byte(`{"$set":{"t":"y"}}`))
	wantCode(t, err, state.CodePermissionDenied)
	_, err = rt.Update(ctx, readers["sibling agent"], "did:nuwa:state:private#v1", "d", []byte(`{"$set":{"t":"y"}}`))
	wantCode(t, err, state.CodeNotFound)
	must[*state.Document](t)(rt.Update(ctx, readers["sibling agent"], "did:nuwa:state:shared#v1", "d", []byte(`{"$set":{"t":"y"}}`)))
	must[*state.Document](t)(rt.Update(ctx, readers["owner"], "did:nuwa:state:private#v1", "d", []byte(`{"$set":{"t":"z"}}`)))
	// Memory scope partitions reads too.
	other := writer
	other.Scope = "sc:other"
	_, err = rt.Get(ctx, other, "did:nuwa:state:private#v1", "d")
	wantCode(t, err, state.CodeNotFound)
}
