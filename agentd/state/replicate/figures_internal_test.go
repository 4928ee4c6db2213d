package replicate

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/state/crdt"
	"github.com/agentnode/agentnode/agentd/state/store"
)

// TestFigure_CatchUp prints what a replica's catch-up costs: every op as
// pushed (one reader's events) against anti-entropy's compressed repair.
// A figure, not a check: it runs only with AGENTNODE_FIGURES=1
// (docs/ASM.md §9.4).
func TestFigure_CatchUp(t *testing.T) {
	if os.Getenv("AGENTNODE_FIGURES") == "" {
		t.Skip("figure; set AGENTNODE_FIGURES=1")
	}
	ctx := context.Background()
	owner := nostr.GeneratePrivateKey()
	opk, _ := nostr.GetPublicKey(owner)
	reps := newSimReplicas(t, ctx, opk, 3)
	a := reps[0]
	docs, per := 1000, 100 // 100,000 ops: a create and 99 edits per document
	t0 := time.Now()
	writeLog(t, ctx, a, docs, per)
	t.Logf("log written in %s", time.Since(t0))
	envs, _ := a.rt.Store().OpsSince(ctx, "cap_sim", 0, 1<<30)
	t0 = time.Now()
	evts, err := a.rep.seal(ctx, "cap_sim", a.rep.selectLocal(envs))
	if err != nil {
		t.Fatal(err)
	}
	pushBytes := 0
	var mine []*nostr.Event
	for _, e := range evts {
		if e.Tags.Find("p")[1] != reps[1].rep.keys.pk {
			continue
		}
		mine = append(mine, e)
		b, _ := json.Marshal(e)
		pushBytes += len(b)
	}
	evts = mine
	n := 0
	t1 := time.Now()
	for _, e := range evts {
		x, err := reps[1].rep.apply(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		n += x
	}
	t.Logf("replay every op: %d envelopes in %d events (one reader), %d bytes, seal %s, apply %s", n, len(evts), pushBytes, t1.Sub(t0), time.Since(t1))

	held, _ := a.rep.holdings(ctx)
	t2 := time.Now()
	var rbytes, revts, rn int
	var applyDur time.Duration
	for _, bk := range a.rep.sharedWith(held, reps[2].rep.keys.pk, nil)[simURI] {
		for _, d := range bk.docs {
			sch, _ := a.rep.cfg.Schemas.Lookup(d.Schema)
			envs, _ := a.rt.Store().DocOps(ctx, sch, d.Doc)
			h := batchHead{NS: "cap_sim", Schema: d.Schema, Scope: d.Scope, Owner: d.Owner, Vis: sch.Visibility, Replica: string(a.rt.Store().Replica())}
			es, err := a.rep.repairEvents(h, envs, reps[2].rep.keys.pk, nostr.Now())
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range es {
				b, _ := json.Marshal(e)
				rbytes += len(b)
				revts++
				s := time.Now()
				x, err := reps[2].rep.apply(ctx, e)
				applyDur += time.Since(s)
				if err != nil {
					t.Fatal(err)
				}
				rn += x
			}
		}
	}
	t.Logf("anti-entropy repair: %d envelopes in %d events, %d bytes, total %s (apply %s)", rn, revts, rbytes, time.Since(t2), applyDur)
	for i := range docs { // both ways end with the same documents
		id := fmt.Sprintf("doc%d", i)
		want, err := a.rt.Get(ctx, a.caller, simURI, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range reps[1:] {
			if got, err := r.rt.Get(ctx, r.caller, simURI, id); err != nil || string(got.Object) != string(want.Object) {
				t.Fatalf("%s differs: %v", id, err)
			}
		}
	}
}

// writeLog gives replica r docs documents of per envelopes each, made on r
// (its replica id) as Update would make them — a create marker, then title
// sets (lww_register) alternating with appends to the body (rga_text) —
// but written straight into the log with ApplyRemote, one transaction per
// document, instead of one transaction and materialisation per edit.
func writeLog(t *testing.T, ctx context.Context, r *simReplica, docs, per int) {
	t.Helper()
	st := r.rt.Store()
	rid := st.Replica()
	counter, wall := uint64(1), time.Now().Add(-time.Hour).UnixMilli()
	next := func(width int) (crdt.OpID, crdt.Timestamp) {
		id := crdt.OpID{Replica: rid, Counter: counter}
		counter += uint64(width)
		wall++
		return id, crdt.Timestamp{Wall: wall, Replica: rid}
	}
	for i := range docs {
		doc := fmt.Sprintf("doc%d", i)
		env := func(action string, op crdt.Op) store.Envelope {
			return store.Envelope{Schema: simURI, Doc: doc, Scope: r.caller.Scope, Owner: r.caller.Owner, Agent: r.caller.Agent, Action: action, Op: op}
		}
		id, ts := next(1)
		envs := []store.Envelope{env(store.ActionCreate, crdt.Op{ID: id, TS: ts, Kind: "create"})}
		var last crdt.OpID // the body's last character
		for j := 1; j < per; j++ {
			var child crdt.Op
			key, typ := "title", crdt.TypeLWWRegister
			if j%2 == 0 {
				text := fmt.Sprintf(" %d", j)
				id, ts = next(len(text))
				child = crdt.Op{ID: id, TS: ts, Kind: crdt.OpInsert, Text: text, Ref: last}
				last = crdt.OpID{Replica: rid, Counter: id.Counter + uint64(len(text)) - 1}
				key, typ = "body", crdt.TypeRGAText
			} else {
				id, ts = next(1)
				child = crdt.Op{ID: id, TS: ts, Kind: crdt.OpSet, Value: json.RawMessage(fmt.Sprintf(`"title %d"`, j))}
			}
			envs = append(envs, env(store.ActionOp, crdt.Op{ID: id, TS: ts, Kind: crdt.OpPut, Key: key, Type: typ, Child: &child}))
		}
		if n, err := st.ApplyRemote(ctx, envs); err != nil || n != per {
			t.Fatalf("document %s: %d of %d envelopes applied: %v", doc, n, per, err)
		}
	}
}
