package replicate

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
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
	const docs, per = 1000, 10
	for i := 0; i < docs; i++ {
		id := fmt.Sprintf("doc%d", i)
		a.rt.Create(ctx, a.caller, simURI, json.RawMessage(`{"id":"`+id+`","title":"x","body":"hello"}`))
		for j := 0; j < per-1; j++ {
			a.rt.Update(ctx, a.caller, simURI, id, []byte(fmt.Sprintf(`[{"op":"add","path":"/title","value":"title %d"},{"op":"add","path":"/body","value":"hello %d"}]`, j, j)))
		}
	}
	envs, _ := a.rt.Store().OpsSince(ctx, "cap_sim", 0, 1<<30)
	t0 := time.Now()
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
}
