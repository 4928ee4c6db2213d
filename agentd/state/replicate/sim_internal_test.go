package replicate

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/agentd/state/store"
)

// simSchema has a field of every CRDT type (shared: every agent reads and
// writes it).
const simSchema = `{
  "$id": "did:nuwa:state:sim#v1", "type": "object", "x-asm": {"x-visibility": "shared"},
  "properties": {
    "title": {"type": "string", "x-crdt": "lww_register"},
    "mood":  {"type": "string", "x-crdt": "mv_register"},
    "body":  {"type": "string", "x-crdt": "rga_text"},
    "tags":  {"type": "array", "items": {"type": "string"}, "x-crdt": "grow_only_set"},
    "meta":  {"type": "object", "x-crdt": "or_map"},
    "count": {"type": "integer", "x-crdt": "counter"},
    "done":  {"type": "boolean", "x-crdt": "flag"},
    "log":   {"type": "array", "x-crdt": "log_rga"},
    "items": {"type": "array", "items": {"type": "string"}, "x-crdt": "rga_list"}
  }
}`

const (
	simCap = "did:nuwa:cap:sim@1.0.0"
	simURI = "did:nuwa:state:sim#v1"
)

// simReplica is one runtime with its agent's replicator (never run: the
// test drives its digest and repair functions by hand).
type simReplica struct {
	rt     *state.Runtime
	rep    *Replicator
	caller state.Caller
	sent   int64 // op-log seq already handed to the network
}

// message is one batch of envelopes on the way to one replica.
type message struct {
	to   int
	envs []store.Envelope
}

// Random ops on random replicas, delivered in random order with
// duplication and loss, then anti-entropy rounds (digest, diff, sealed
// and compressed repair, opened by the receiver): every replica ends with
// the same documents, byte for byte, for every CRDT type. Seeded: a
// failure names its seed.
func TestAntiEntropy_RandomizedConvergence(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { simulate(t, seed) })
	}
}

func simulate(t *testing.T, seed uint64) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 99))
	owner := nostr.GeneratePrivateKey()
	ownerPK, _ := nostr.GetPublicKey(owner)
	reps := newSimReplicas(t, ctx, ownerPK, 3)
	docs := []string{"d0", "d1", "d2"}
	if _, err := reps[0].rt.Create(ctx, reps[0].caller, simURI, json.RawMessage(`{"id":"d0"}`)); err != nil {
		t.Fatal(err)
	}
	var net []message
	for step := 0; step < 150; step++ {
		i := rng.IntN(len(reps))
		simEdit(t, ctx, rng, reps[i], docs)
		net = append(net, reps[i].outbox(t, ctx, i, len(reps), rng)...)
		for len(net) > 0 && rng.IntN(3) == 0 { // deliver a random message now and then
			k := rng.IntN(len(net))
			reps[net[k].to].rt.Store().ApplyRemote(ctx, net[k].envs)
			net = append(net[:k], net[k+1:]...)
		}
	}
	for _, m := range net { // what is still in flight arrives, unless lost
		if rng.IntN(5) > 0 {
			reps[m.to].rt.Store().ApplyRemote(ctx, m.envs)
		}
	}
	repaired := antiEntropyRound(t, ctx, reps) + antiEntropyRound(t, ctx, reps)
	assertIdentical(t, ctx, reps, docs)
	if repaired == 0 {
		t.Fatal("anti-entropy repaired nothing: the lossy delivery lost nothing?")
	}
	if n := antiEntropyRound(t, ctx, reps); n != 0 { // converged: digests agree
		t.Fatalf("after convergence a round still repaired %d documents", n)
	}
	for _, r := range reps {
		if s := r.rep.Stats(); s.Lacking != 0 {
			t.Fatalf("a replica still lacks state after convergence: %+v", s)
		}
	}
}

// antiEntropyRound runs antiEntropyPair for every ordered pair; it
// returns how many documents were resent.
func antiEntropyRound(t *testing.T, ctx context.Context, reps []*simReplica) int {
	n := 0
	for a := range reps {
		for b := range reps {
			if a != b {
				n += antiEntropyPair(t, ctx, reps[a], reps[b])
			}
		}
	}
	return n
}

func newSimReplicas(t *testing.T, ctx context.Context, owner string, n int) []*simReplica {
	keys := make([]string, n)
	pks := make([]string, n)
	for i := range keys {
		keys[i] = nostr.GeneratePrivateKey()
		pks[i], _ = nostr.GetPublicKey(keys[i])
	}
	dir := StaticDirectory{owner: pks}
	out := make([]*simReplica, n)
	for i := range out {
		rt, err := state.Open(ctx, state.Options{Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rt.Close(ctx) })
		if _, err := rt.Register(ctx, simCap, []byte(simSchema)); err != nil {
			t.Fatal(err)
		}
		rep, err := New(rt.Store(), Config{SecretKey: keys[i], Owner: owner, Directory: dir, Schemas: rt.Schemas(),
			Links: []Link{{Name: "none"}}, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		out[i] = &simReplica{rt: rt, rep: rep,
			caller: state.Caller{Agent: pks[i], Owner: owner, Capability: simCap, Scope: "sc:sim", Verbs: state.AllVerbs}}
	}
	return out
}

// simEdit makes one random edit on r: a create of a document it lacks, or
// a patch of one of every CRDT kind.
func simEdit(t *testing.T, ctx context.Context, rng *rand.Rand, r *simReplica, docs []string) {
	id := docs[rng.IntN(len(docs))]
	d, err := r.rt.Get(ctx, r.caller, simURI, id)
	if err != nil {
		if _, err := r.rt.Create(ctx, r.caller, simURI, json.RawMessage(`{"id":"`+id+`"}`)); err != nil &&
			!strings.Contains(err.Error(), "CONFLICT") {
			t.Fatal(err)
		}
		return
	}
	var cur map[string]any
	json.Unmarshal(d.Object, &cur)
	w := fmt.Sprintf("w%d", rng.IntN(1000))
	patches := []string{
		`[{"op":"add","path":"/title","value":"` + w + `"}]`,
		`[{"op":"add","path":"/mood","value":"` + w + `"}]`,
		`[{"op":"add","path":"/body","value":` + quote(mutate(rng, fmt.Sprint(cur["body"]))) + `}]`,
		`[{"op":"add","path":"/tags/-","value":"t` + fmt.Sprint(rng.IntN(5)) + `"}]`,
		`{"$set":{"meta.k` + fmt.Sprint(rng.IntN(4)) + `":"` + w + `"}}`,
		`[{"op":"remove","path":"/meta"}]`,
		`{"$inc":{"count":` + fmt.Sprint(rng.IntN(7)-3) + `}}`,
		`[{"op":"add","path":"/done","value":` + fmt.Sprint(rng.IntN(2) == 0) + `}]`,
		`{"$push":{"log":"` + w + `"}}`,
		`{"$push":{"items":"` + w + `"}}`,
		`[{"op":"remove","path":"/items/0"}]`,
	}
	p := patches[rng.IntN(len(patches))]
	if _, err := r.rt.Update(ctx, r.caller, simURI, id, []byte(p)); err != nil &&
		!strings.Contains(err.Error(), "INVALID_INPUT") && !strings.Contains(err.Error(), "NOT_FOUND") {
		t.Fatalf("%s: %v", p, err)
	}
}

// mutate inserts or deletes a few runes at a random place.
func mutate(rng *rand.Rand, s string) string {
	if s == "<nil>" {
		s = ""
	}
	r := []rune(s)
	at := rng.IntN(len(r) + 1)
	if rng.IntN(3) == 0 && at < len(r) {
		return string(r[:at]) + string(r[at+1:])
	}
	return string(r[:at]) + string(rune('a'+rng.IntN(26))) + string(r[at:])
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// outbox hands r's new local ops to the network: per other replica one
// message, lost (1 in 5) or duplicated (1 in 5).
func (r *simReplica) outbox(t *testing.T, ctx context.Context, self, n int, rng *rand.Rand) []message {
	envs, err := r.rt.Store().OpsSince(ctx, "cap_sim", r.sent, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(envs) == 0 {
		return nil
	}
	r.sent = envs[len(envs)-1].Seq
	envs = r.rep.selectLocal(envs)
	var out []message
	for to := range n {
		switch k := rng.IntN(5); {
		case to == self || k == 0:
		case k == 1:
			out = append(out, message{to, envs}, message{to, envs})
		default:
			out = append(out, message{to, envs})
		}
	}
	return out
}

// antiEntropyPair runs one digest from a to b and b's repair of a, through
// the real event encodings.
func antiEntropyPair(t *testing.T, ctx context.Context, a, b *simReplica) int {
	n := 0
	held, err := a.rep.holdings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	evt, err := a.rep.digestEvent(a.rep.sharedWith(held, b.rep.keys.pk, nil), a.rep.knownSchemas(), b.rep.keys.pk)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.rep.onDigest(ctx, evt); err != nil {
		t.Fatal(err)
	}
	for len(b.rep.repairs) > 0 {
		req := <-b.rep.repairs
		n += len(req.docs)
		for _, d := range req.docs {
			sch, _ := b.rep.cfg.Schemas.Lookup(d.Schema)
			envs, err := b.rt.Store().DocOps(ctx, sch, d.Doc)
			if err != nil {
				t.Fatal(err)
			}
			h := batchHead{NS: "cap_sim", Schema: d.Schema, Scope: d.Scope, Owner: d.Owner, Vis: sch.Visibility,
				Replica: string(b.rt.Store().Replica())}
			evts, err := b.rep.repairEvents(h, envs, req.peer, nostr.Now())
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range evts {
				if _, err := a.rep.apply(ctx, e); err != nil {
					t.Fatalf("repair did not apply: %v", err)
				}
			}
		}
	}
	return n
}

// assertIdentical compares every document on every replica with replica 0.
func assertIdentical(t *testing.T, ctx context.Context, reps []*simReplica, docs []string) {
	t.Helper()
	for _, id := range docs {
		var want string
		for i, r := range reps {
			d, err := r.rt.Get(ctx, r.caller, simURI, id)
			got := "<missing>"
			if err == nil {
				got = string(d.Object)
			}
			if i == 0 {
				want = got
			} else if got != want {
				t.Fatalf("doc %s: replica %d has\n%s\nreplica 0 has\n%s", id, i, got, want)
			}
		}
	}
}
