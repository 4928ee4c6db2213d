package bench

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/agentd/state/replicate"
)

// The state phase of the federation bench: shared-state documents (the
// Agent State Model, kind-4290 op events, agentd/state/replicate) edited
// on both sides of a partition, and the anti-entropy rounds until every
// replica holds the same documents again.

const (
	benchStateCap = "did:nuwa:cap:benchteam@1.0.0"
	benchStateURI = "did:nuwa:state:benchteam#v1"
	// benchStateSchema is a shared note: every agent of the owner reads
	// and writes it (title LWW, body RGA text, tags a grow-only set).
	benchStateSchema = `{
  "$id": "did:nuwa:state:benchteam#v1",
  "type": "object", "x-asm": {"x-visibility": "shared"},
  "properties": {
    "id": {"type": "string", "format": "uuid"},
    "title": {"type": "string", "x-crdt": "lww_register"},
    "body": {"type": "string", "x-crdt": "rga_text"},
    "tags": {"type": "array", "items": {"type": "string"}, "x-crdt": "grow_only_set"},
    "createdAt": {"type": "string", "format": "date-time"},
    "updatedAt": {"type": "string", "format": "date-time"}
  },
  "required": ["id", "title", "body", "createdAt", "updatedAt"]
}`
	// stateWait bounds each wait of the state phase, or (overlay hops +
	// 2) anti-entropy intervals if longer: agents that share no relay
	// meet only through repairs, one hop per round.
	stateWait = 120 * time.Second
	// Defaults of the state phase (bench federation --state-*).
	// DefaultStateInterval is the production interval
	// (replicate.DefaultAntiEntropy): a round is then longer than the
	// repairs it starts take to apply, so rounds count rounds, not CPU
	// time (with 2 s on a loaded 2-core machine the first round's
	// repairs are still applying when rounds 2–5 start).
	DefaultStateInterval = replicate.DefaultAntiEntropy
	DefaultStateOwners   = 3
	DefaultStateDocs     = 5
	DefaultStateEdits    = 3
)

// errStateNotConverged: a wait of the state phase ran out.
var errStateNotConverged = errors.New("bench federation: state did not converge")

// StateReport is the shared-state partition figure. Every node runs a
// state runtime with one agent; the agents belong to Owners owners (node i
// to owner i mod Owners) and each owner has Docs shared documents. Each
// agent's replicator syncs over its own relay and the relays its node
// follows, as `serve --peer` does (replicate.Supervisor). The nodes are
// cut in two halves (replicators link only to the peers of their own
// half; split), every agent edits every document of its owner EditRounds times,
// concurrently, then the partition heals: every replicator restarts with
// all its links (a reconnect) and sends its digests at once, then every
// Interval. Rounds is how many anti-entropy rounds had started (the
// first at the heal) when every replica of every owner held
// byte-identical, complete documents; Converged is the time from the
// heal.
type StateReport struct {
	Owners     int           `json:"owners"`
	Docs       int           `json:"docs"`        // per owner
	EditRounds int           `json:"edit_rounds"` // per agent and document while partitioned
	Edits      int           `json:"edits"`       // updates made while partitioned
	Interval   time.Duration `json:"interval"`    // anti-entropy interval
	Diverged   int           `json:"diverged"`    // (owner, document) pairs not identical everywhere when the partition healed
	Leaked     int           `json:"leaked"`      // replicas holding an edit from the other side before the heal (0: the cut held)
	// OverlayHops is, over every owner, the longest shortest path
	// between two of its agents in the graph where two agents are
	// adjacent when their replicators share a relay (a replicator pushes
	// only its own ops; anti-entropy repairs carry the others' one hop
	// per round).
	OverlayHops int `json:"overlay_hops"`
	Rounds      int `json:"rounds"`
	// DivergedPerRound: the documents that still differed when each round
	// after the first started (1, 2, … intervals after the heal).
	DivergedPerRound []int         `json:"diverged_per_round"`
	Converged        time.Duration `json:"converged"`
	// Digests and RepairOps are what the replicators sent from the heal
	// until convergence: digests, and op envelopes in repair events (0
	// repair ops: the reconnect's push and pull alone converged).
	Digests   int64 `json:"digests"`
	RepairOps int64 `json:"repair_ops"`
}

// stateNode is one node's state runtime, agent and replicator.
type stateNode struct {
	rt     *state.Runtime
	sk, pk string
	owner  int
	rep    *replicate.Replicator
	stop   func()
}

// stateBench is the state phase's world.
type stateBench struct {
	nodes  []*fedNode
	sn     []*stateNode
	owners []string            // owner pubkeys
	agents map[string][]string // owner -> agent pubkeys
	docs   [][]string          // per owner: document ids
	every  time.Duration
	wait   time.Duration // bound of each wait: stateWait or more (overlayHops)
	// ownerRelay: every agent also links to its owner's relay (the node
	// of the owner's first agent), as agents using their owner's NIP-65
	// relays would; the partition cuts it like any other link.
	ownerRelay bool
	log        *slog.Logger
}

// split cuts the nodes in two so that every owner with two agents or
// more has agents on both sides (node i hosts an agent of owner i mod
// owners: alternate blocks of len(owners) nodes): every owner's state
// diverges, the worst case for the heal.
func (b *stateBench) split() []bool {
	side := make([]bool, len(b.sn))
	for i := range side {
		side[i] = (i/len(b.owners))%2 == 0
	}
	return side
}

// statePartition measures StateReport on the federation's nodes.
func statePartition(ctx context.Context, nodes []*fedNode, follow [][]int, opts FederationOptions) (*StateReport, error) {
	b := &stateBench{nodes: nodes, agents: map[string][]string{}, every: opts.StateInterval, ownerRelay: opts.StateOwnerRelay,
		log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	defer b.close()
	if err := b.open(ctx, opts); err != nil {
		return nil, err
	}
	all := func(i int) []int { return b.relays(i, follow) }
	for i := range b.sn {
		if err := b.start(i, all(i)); err != nil {
			return nil, err
		}
	}
	hops := b.overlayHops(follow)
	if hops < 0 {
		return nil, fmt.Errorf("%w: the agents of an owner share no chain of relays (the replicators of agents that share no relay never meet); use --state-owner-relay or more --peers", errStateNotConverged)
	}
	b.wait = max(stateWait, time.Duration(hops+2)*b.every)
	if err := b.createDocs(ctx, opts.StateDocs); err != nil {
		return nil, err
	}
	if err := b.waitConverged(ctx); err != nil {
		return nil, fmt.Errorf("%w before the partition: %v", errStateNotConverged, err)
	}
	side := b.split()
	for i := range b.sn {
		b.sn[i].stop()
		var same []int
		for _, j := range all(i) {
			if side[j] == side[i] {
				same = append(same, j)
			}
		}
		if err := b.start(i, same); err != nil {
			return nil, err
		}
	}
	rep := &StateReport{Owners: len(b.owners), Docs: opts.StateDocs, EditRounds: opts.StateEdits, Interval: b.every,
		OverlayHops: hops}
	var err error
	if rep.Edits, err = b.editAll(ctx, opts.StateEdits); err != nil {
		return nil, err
	}
	rep.Diverged, rep.Leaked = b.diverged(ctx), b.leaked(ctx, side)
	start := time.Now()
	for i := range b.sn { // heal: every replicator reconnects with all its links
		b.sn[i].stop()
		if err := b.start(i, all(i)); err != nil {
			return nil, err
		}
	}
	if err := b.waitHealed(ctx, start, rep); err != nil {
		return nil, err
	}
	rep.Digests, rep.RepairOps = b.sent()
	return rep, nil
}

// open opens a state runtime per node, under the node's data dir, with
// one agent; agents are spread over the owners round-robin.
func (b *stateBench) open(ctx context.Context, opts FederationOptions) error {
	owners := min(max(opts.StateOwners, 1), len(b.nodes))
	for range owners {
		b.owners = append(b.owners, nostr.GeneratePrivateKey())
	}
	for k, sk := range b.owners {
		b.owners[k], _ = nostr.GetPublicKey(sk)
	}
	for i, n := range b.nodes {
		rt, err := state.Open(ctx, state.Options{Dir: n.dir + "-state", Logger: b.log})
		if err != nil {
			return fmt.Errorf("bench federation: state on node %d: %w", i, err)
		}
		sn := &stateNode{rt: rt, sk: nostr.GeneratePrivateKey(), owner: i % owners, stop: func() {}}
		b.sn = append(b.sn, sn)
		if _, err := rt.Register(ctx, benchStateCap, []byte(benchStateSchema)); err != nil {
			return fmt.Errorf("bench federation: state schema: %w", err)
		}
		sn.pk, _ = nostr.GetPublicKey(sn.sk)
		o := b.owners[sn.owner]
		b.agents[o] = append(b.agents[o], sn.pk)
	}
	return nil
}

// start runs node i's replicator over its own relay and the relays of
// the nodes in peers (replicate.Supervisor's links).
func (b *stateBench) start(i int, peers []int) error {
	sn := b.sn[i]
	links := []replicate.Link{(&replicate.Local{Relay: b.nodes[i].r, Poll: 50 * time.Millisecond}).Link("local")}
	var ws []*replicate.WSRelay
	for _, j := range peers {
		w := replicate.NewWSRelay(b.nodes[j].url, sn.sk, b.log)
		ws = append(ws, w)
		links = append(links, replicate.WSLink(w))
	}
	dir := replicate.DirectoryFunc(func(_ context.Context, owner string) ([]string, error) { return b.agents[owner], nil })
	rep, err := replicate.New(sn.rt.Store(), replicate.Config{SecretKey: sn.sk, Owner: b.owners[sn.owner], Directory: dir,
		Schemas: sn.rt.Schemas(), Links: links, AntiEntropyInterval: b.every,
		RetryMin: 20 * time.Millisecond, RetryMax: 500 * time.Millisecond, Logger: b.log})
	if err != nil {
		return fmt.Errorf("bench federation: replicator of node %d: %w", i, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); rep.Run(ctx) }()
	sn.rep = rep
	sn.stop = func() {
		cancel()
		<-done
		for _, w := range ws {
			w.Close()
		}
		sn.stop = func() {}
	}
	return nil
}

func (b *stateBench) close() {
	for _, sn := range b.sn {
		sn.stop()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		sn.rt.Close(ctx)
		cancel()
	}
}

// caller is node i's agent acting on its owner's shared documents.
func (b *stateBench) caller(i int) state.Caller {
	sn := b.sn[i]
	return state.Caller{Agent: sn.pk, Owner: b.owners[sn.owner], Capability: benchStateCap, Scope: "sc:bench", Verbs: state.AllVerbs}
}

// createDocs creates each owner's documents on the first node of its agents.
func (b *stateBench) createDocs(ctx context.Context, docs int) error {
	b.docs = make([][]string, len(b.owners))
	for k := range b.owners {
		for d := range max(docs, 1) {
			id := fmt.Sprintf("55555555-5555-4555-8555-%06d%06d", k, d)
			body, _ := json.Marshal(map[string]any{"id": id, "title": "draft", "body": "The quick fox.", "tags": []string{"start"},
				"createdAt": "2025-05-15T10:00:00Z", "updatedAt": "2025-05-15T10:00:00Z"})
			if _, err := b.sn[k].rt.Create(ctx, b.caller(k), benchStateURI, body); err != nil {
				return fmt.Errorf("bench federation: create a shared document: %w", err)
			}
			b.docs[k] = append(b.docs[k], id)
		}
	}
	return nil
}

// editAll has every agent edit every document of its owner rounds times
// (title, a tag, the body), all agents at once; it returns the updates.
func (b *stateBench) editAll(ctx context.Context, rounds int) (int, error) {
	errs := make([]error, len(b.sn))
	done := make(chan struct{})
	for i := range b.sn {
		go func() {
			defer func() { done <- struct{}{} }()
			errs[i] = b.edit(ctx, i, rounds)
		}()
	}
	for range b.sn {
		<-done
	}
	n := 0
	for i := range b.sn {
		n += max(rounds, 1) * len(b.docs[b.sn[i].owner])
	}
	return n, errors.Join(errs...)
}

// edit is node i's agent's share of editAll.
func (b *stateBench) edit(ctx context.Context, i, rounds int) error {
	c := b.caller(i)
	for r := range max(rounds, 1) {
		for _, id := range b.docs[b.sn[i].owner] {
			word, _ := json.Marshal(fmt.Sprintf(" n%d.%d", i, r))
			patch := fmt.Sprintf(`[{"op":"replace","path":"/title","value":"n%[1]d %[2]d"},{"op":"add","path":"/tags/-","value":"n%[1]d.%[2]d"},{"op":"replace","path":"/body","value":%[3]s}]`,
				i, r, word)
			if _, err := b.sn[i].rt.Update(ctx, c, benchStateURI, id, []byte(patch)); err != nil {
				return fmt.Errorf("bench federation: update on node %d: %w", i, err)
			}
		}
	}
	return nil
}

// replicaState is what node i holds of its owner's documents: per
// document id, the op-set digest (store.DocDigest.Hash: the sorted live
// op ids) and the materialized object; a document missing or incomplete
// (the replica knows it lacks causal history) is left out.
func (b *stateBench) replicaState(ctx context.Context, i int) map[string]string {
	hashes := map[string]string{}
	nss, _ := b.sn[i].rt.Store().Namespaces(ctx)
	for _, ns := range nss {
		ds, _ := b.sn[i].rt.Store().Digests(ctx, ns)
		for _, d := range ds {
			if d.Schema == benchStateURI {
				hashes[d.Doc] = hex.EncodeToString(d.Hash[:])
			}
		}
	}
	out := map[string]string{}
	for _, id := range b.docs[b.sn[i].owner] {
		d, err := b.sn[i].rt.Get(ctx, b.caller(i), benchStateURI, id)
		if err == nil && d.Incomplete == "" && hashes[id] != "" {
			out[id] = hashes[id] + " " + string(d.Object)
		}
	}
	return out
}

// diverged counts the (owner, document) pairs whose replicas differ: a
// replica lacks the document or holds other ops or another object.
func (b *stateBench) diverged(ctx context.Context) int {
	held := make([]map[string]string, len(b.sn))
	for i := range b.sn {
		held[i] = b.replicaState(ctx, i)
	}
	n := 0
	for k, ids := range b.docs {
		for _, id := range ids {
			first, same := "", true
			for i, sn := range b.sn {
				if sn.owner != k {
					continue
				}
				s := held[i][id]
				if s == "" || (first != "" && s != first) {
					same = false
				}
				first = s
			}
			if !same {
				n++
			}
		}
	}
	return n
}

// leaked counts the documents that hold, before the heal, an edit made
// on the other side of the partition (it must be 0: the cut held).
func (b *stateBench) leaked(ctx context.Context, side []bool) int {
	n := 0
	for i := range b.sn {
		for _, s := range b.replicaState(ctx, i) {
			for j := range b.sn {
				if side[j] != side[i] && strings.Contains(s, fmt.Sprintf(`"n%d.0"`, j)) {
					n++
					break
				}
			}
		}
	}
	return n
}

// waitConverged polls until no document differs, at most stateWait.
func (b *stateBench) waitConverged(ctx context.Context) error {
	deadline := time.Now().Add(b.wait)
	for {
		d := b.diverged(ctx)
		if d == 0 {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%w within %v: %d document(s) differ", errStateNotConverged, b.wait, d)
		}
		sleepCtx(ctx, 20*time.Millisecond)
	}
}

// waitHealed polls until no document differs (at most stateWait), noting
// the documents that differ at each round boundary; it fills Converged
// and Rounds: round k starts (k-1) intervals after the heal (a replicator
// sends its digests when it starts, then every interval).
func (b *stateBench) waitHealed(ctx context.Context, start time.Time, rep *StateReport) error {
	deadline := start.Add(b.wait)
	for {
		d := b.diverged(ctx)
		since := time.Since(start)
		if d == 0 {
			rep.Converged, rep.Rounds = since, int(since/b.every)+1
			return nil
		}
		for len(rep.DivergedPerRound) < int(since/b.every) {
			rep.DivergedPerRound = append(rep.DivergedPerRound, d)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%w within %v after the heal: %d document(s) differ", errStateNotConverged, b.wait, d)
		}
		sleepCtx(ctx, 20*time.Millisecond)
	}
}

// sent sums the running replicators' digests and repair ops.
func (b *stateBench) sent() (digests, repairOps int64) {
	for _, sn := range b.sn {
		s := sn.rep.Stats()
		digests += s.DigestsSent
		repairOps += s.RepairOps
	}
	return digests, repairOps
}

// relays are the other nodes whose relays node i's replicator links to:
// those its node follows, and its owner's relay (ownerRelay).
func (b *stateBench) relays(i int, follow [][]int) []int {
	out := slices.Clone(follow[i])
	if k := b.sn[i].owner; b.ownerRelay && k != i && !slices.Contains(out, k) {
		out = append(out, k) // node k hosts owner k's first agent
	}
	return out
}

// overlayHops is StateReport.OverlayHops for the links of follow; -1 if
// two agents of an owner are not connected at all.
func (b *stateBench) overlayHops(follow [][]int) int {
	relays := func(i int) []int { return append([]int{i}, b.relays(i, follow)...) }
	adjacent := func(i, j int) bool {
		for _, r := range relays(i) {
			if slices.Contains(relays(j), r) {
				return true
			}
		}
		return false
	}
	most := 0
	for k := range b.owners {
		var mine []int
		for i, sn := range b.sn {
			if sn.owner == k {
				mine = append(mine, i)
			}
		}
		for _, s := range mine { // breadth-first from each agent
			dist := map[int]int{s: 0}
			queue := []int{s}
			for len(queue) > 0 {
				at := queue[0]
				queue = queue[1:]
				for _, j := range mine {
					if _, seen := dist[j]; !seen && adjacent(at, j) {
						dist[j] = dist[at] + 1
						queue = append(queue, j)
					}
				}
			}
			for _, j := range mine {
				d, ok := dist[j]
				if !ok {
					return -1 // not connected: never converges
				}
				most = max(most, d)
			}
		}
	}
	return most
}
