package bench

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http/httptest"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/peers"
	"github.com/agentnode/agentnode/relay"
)

// Federation defaults.
const (
	DefaultFederationNodes   = 10
	DefaultFederationPeers   = 3
	DefaultFederationLessons = 100
)

// FederationOptions tune Federation.
type FederationOptions struct {
	Nodes   int           // in-process nodes on loopback
	Peers   int           // relays each node follows (--peer): the next one on a ring, the rest at random
	Lessons int           // lessons injected at random nodes, one every Spacing
	Spacing time.Duration // between injections [20 ms]
	Idle    time.Duration // the idle traffic window [10 s]
	Seed    uint64
	Dir     string
	// CPUProfile, when set, is a file that receives the CPU profile of the
	// propagation phase (from the first lesson until every lesson is
	// everywhere): where 2 shared cores spend the time of N nodes.
	CPUProfile string
	// Push: each node runs one agent that signs the lessons published
	// there, and its syncer pushes them to the peers it follows, as
	// `serve --peer` pushes its agents' events (Config.Outbox). Without,
	// lessons only travel by being pulled.
	Push bool
	// StateOwners > 0 runs the state phase (federation_state.go): one
	// agent per node, spread over StateOwners owners, StateDocs shared
	// documents per owner, each edited StateEdits times by every agent of
	// its owner on both sides of a partition; anti-entropy every
	// StateInterval [DefaultStateInterval].
	StateOwners   int
	StateDocs     int
	StateEdits    int
	StateInterval time.Duration
	// StateOwnerRelay: each agent's replicator also links to its owner's
	// relay (the node of the owner's first agent), besides its node's own
	// and followed relays; without it two agents of an owner whose nodes
	// share no chain of relays never meet (the bench then fails).
	StateOwnerRelay bool
}

// FederationReport is what Federation measured.
type FederationReport struct {
	Nodes, Peers, Lessons int
	Machine               Machine `json:"machine"`
	// Propagation is the time from a lesson's publish on one node until
	// another node stored it, over every (lesson, other node) pair.
	P50, P99, Max time.Duration
	// Hops: how many syncer links a lesson crosses from the node it was
	// published on to another, over every (from, to) pair of the topology:
	// the mean and the largest (each hop is a store, an fsync, a
	// broadcast and a verification).
	MeanHops  float64 `json:"mean_hops"`
	MaxHops   int     `json:"max_hops"`
	Delivered int     `json:"delivered"` // (lesson, node) pairs that arrived
	Expected  int     `json:"expected"`
	// Traffic is websocket bytes through each node's listener (in + out),
	// per node per minute: idle (syncers connected, nothing published)
	// and from the first lesson until every lesson is everywhere.
	IdleBytesPerNodeMin int64 `json:"idle_bytes_per_node_min"`
	LoadBytesPerNodeMin int64 `json:"load_bytes_per_node_min"`
	// Restart: a third of the nodes stop; lessons are published on the
	// others; the third comes back (same data, same address). Converged
	// is the time from the restart until every node holds every lesson.
	Restarted        int           `json:"restarted"`
	RestartLessons   int           `json:"restart_lessons"`
	RestartConverged time.Duration `json:"restart_converged"`
	RestartDelivered int           `json:"restart_delivered"`
	RestartExpected  int           `json:"restart_expected"`
	// Partition: the nodes cut in two halves, lessons published, the
	// partition healed by anti-entropy rounds (federation_partition.go).
	Partition *PartitionReport `json:"partition"`
	// State: shared-state documents edited on both sides of a partition,
	// then healed (federation_state.go); nil when not run.
	State *StateReport `json:"state,omitempty"`
}

// countingListener counts the bytes of every connection it accepts.
type countingListener struct {
	net.Listener
	bytes *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, l.bytes}, nil
}

type countingConn struct {
	net.Conn
	bytes *atomic.Int64
}

func (c countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.bytes.Add(int64(n))
	return n, err
}

func (c countingConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.bytes.Add(int64(n))
	return n, err
}

// fedNode is one node: a relay on a counting listener and its syncer.
type fedNode struct {
	dir, addr string
	r         *relay.Relay
	url       string
	srv       *httptest.Server
	bytes     atomic.Int64
	arrived   sync.Map // lesson id -> time stored
	stopSync  func()   // nil: no syncer running
	agent     string   // secret key of the node's agent (FederationOptions.Push)
	push      bool
}

func openFedNode(ctx context.Context, dir string) (*fedNode, error) {
	n := &fedNode{dir: dir, addr: "127.0.0.1:0"}
	return n, n.open(ctx)
}

// open opens the relay on n.dir and serves it on n.addr (the same address
// after a restart).
func (n *fedNode) open(ctx context.Context) error {
	r, err := relay.Open(ctx, relay.Config{DataDir: n.dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", n.addr)
	if err != nil {
		r.Close(ctx)
		return err
	}
	n.r, n.addr = r, ln.Addr().String()
	n.srv = httptest.NewUnstartedServer(r)
	n.srv.Listener.Close()
	n.srv.Listener = countingListener{ln, &n.bytes}
	n.srv.Start()
	n.url = "ws" + strings.TrimPrefix(n.srv.URL, "http")
	r.OnStored(func(evt *nostr.Event) {
		if evt.Kind == 4129 {
			n.arrived.LoadOrStore(evt.ID, time.Now())
		}
	})
	return nil
}

func (n *fedNode) close() {
	if n.stopSync != nil {
		n.stopSync()
		n.stopSync = nil
	}
	n.srv.CloseClientConnections()
	n.srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n.r.Close(ctx)
}

// follow starts n's syncer on urls; n.stopSync stops it.
func (n *fedNode) follow(ctx context.Context, urls []string, defID string) {
	ctx, cancel := context.WithCancel(ctx)
	interests := []nostr.Filter{{Kinds: []int{4129}, Tags: nostr.TagMap{"e": {defID}}}}
	var outbox []nostr.Filter
	if n.push {
		pk, _ := nostr.GetPublicKey(n.agent)
		outbox = []nostr.Filter{{Kinds: []int{4129}, Authors: []string{pk}}}
	}
	s := peers.New(peers.Config{Peers: urls, Local: n.r, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Interests: func() []nostr.Filter { return interests },
		Outbox:    func() []nostr.Filter { return outbox },
		Backoff:   peers.Backoff{Min: 50 * time.Millisecond, Max: time.Second}})
	remove := n.r.OnStored(s.Notify)
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	n.stopSync = func() { remove(); cancel(); <-done }
}

// Federation runs Nodes in-process nodes, each following Peers others
// (agentd/peers, as `serve --peer` does) for the lessons of one
// definition, injects Lessons lessons at random nodes and measures how
// long each takes to reach every other node, and the traffic per node.
func Federation(ctx context.Context, opts FederationOptions) (*FederationReport, error) {
	opts.Spacing = cmp.Or(opts.Spacing, 20*time.Millisecond)
	opts.Idle = cmp.Or(opts.Idle, 10*time.Second)
	root, err := os.MkdirTemp(opts.Dir, "bench-federation-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	nodes := make([]*fedNode, opts.Nodes)
	for i := range nodes {
		if nodes[i], err = openFedNode(ctx, fmt.Sprintf("%s/n%d", root, i)); err != nil {
			return nil, err
		}
		nodes[i].agent, nodes[i].push = nostr.GeneratePrivateKey(), opts.Push
		defer nodes[i].close()
	}
	rng := rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b9))
	def, author, err := fedDefinition(ctx, nodes)
	if err != nil {
		return nil, err
	}
	rep := &FederationReport{Nodes: opts.Nodes, Peers: opts.Peers, Lessons: opts.Lessons, Machine: describeMachine(opts.Dir, opts.Dir)}
	follow := topology(rng, opts.Nodes, opts.Peers)
	rep.MeanHops, rep.MaxHops = hops(follow)
	for i, n := range nodes {
		n.follow(ctx, followURLs(nodes, follow[i]), def.ID)
	}
	if err := waitConnected(ctx, nodes, def.ID, author); err != nil {
		return nil, err
	}
	rep.IdleBytesPerNodeMin = traffic(nodes, func() { sleepCtx(ctx, opts.Idle) }, opts.Idle)
	stop, err := startCPUProfile(opts.CPUProfile)
	if err != nil {
		return nil, err
	}
	rep.LoadBytesPerNodeMin = traffic(nodes, func() {
		sent := inject(ctx, rng, nodes, author, def.ID, opts)
		measure(ctx, nodes, sent, rep) // until every lesson is everywhere
	}, 0)
	if err := stop(); err != nil {
		return nil, err
	}
	if err := restartThird(ctx, rng, nodes, follow, author, def.ID, opts, rep); err != nil {
		return nil, err
	}
	if rep.Partition, err = partitionHeal(ctx, rng, nodes, follow, author, def.ID, opts); err != nil {
		return nil, err
	}
	if opts.StateOwners > 0 {
		opts.StateInterval = cmp.Or(opts.StateInterval, DefaultStateInterval)
		if rep.State, err = statePartition(ctx, nodes, follow, opts); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// startCPUProfile starts a CPU profile into path ("" : none); stop ends
// it and closes the file.
func startCPUProfile(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("bench federation: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("bench federation: %w", err)
	}
	return func() error { pprof.StopCPUProfile(); return f.Close() }, nil
}

func followURLs(nodes []*fedNode, idx []int) []string {
	var urls []string
	for _, j := range idx {
		urls = append(urls, nodes[j].url)
	}
	return urls
}

// restartThird stops a third of the nodes, publishes lessons on the others,
// restarts the third and measures how long until every node holds them.
func restartThird(ctx context.Context, rng *rand.Rand, nodes []*fedNode, follow [][]int, sk, defID string, opts FederationOptions, rep *FederationReport) error {
	down := rng.Perm(len(nodes))[:len(nodes)/3]
	for _, i := range down {
		nodes[i].close()
	}
	var sent []sentLesson
	for k := range max(opts.Lessons/4, 1) {
		at := rng.IntN(len(nodes))
		for slices.Contains(down, at) {
			at = rng.IntN(len(nodes))
		}
		evt := fedLesson(nodes[at].agent, defID, fmt.Sprintf("while a third was down %d", k))
		if nodes[at].r.Publish(ctx, evt) == nil {
			sent = append(sent, sentLesson{evt.ID, at, time.Time{}})
		}
	}
	start := time.Now()
	for _, i := range down {
		if err := nodes[i].open(ctx); err != nil {
			return fmt.Errorf("bench federation: restart node %d: %w", i, err)
		}
		nodes[i].follow(ctx, followURLs(nodes, follow[i]), defID)
	}
	rep.Restarted, rep.RestartLessons = len(down), len(sent)
	rep.RestartExpected = len(sent) * len(nodes)
	deadline := time.Now().Add(60 * time.Second)
	for {
		rep.RestartDelivered = 0
		for _, s := range sent {
			for _, n := range nodes {
				if _, ok := n.arrived.Load(s.id); ok {
					rep.RestartDelivered++
				}
			}
		}
		if rep.RestartDelivered == rep.RestartExpected || time.Now().After(deadline) {
			break
		}
		sleepCtx(ctx, 20*time.Millisecond)
	}
	rep.RestartConverged = time.Since(start)
	return nil
}

// topology: node i follows i+1 (a ring: every node reaches every other)
// and peers-1 others at random.
func topology(rng *rand.Rand, n, peers int) [][]int {
	out := make([][]int, n)
	for i := range n {
		follow := []int{(i + 1) % n}
		for len(follow) < min(peers, n-1) {
			if j := rng.IntN(n); j != i && !slices.Contains(follow, j) {
				follow = append(follow, j)
			}
		}
		out[i] = follow
	}
	return out
}

// hops is the mean and largest distance from a publishing node to every
// other along the follow links (a lesson stored on j reaches i when i
// follows j).
func hops(follow [][]int) (mean float64, most int) {
	n, sum := len(follow), 0
	followers := make([][]int, n)
	for i, js := range follow {
		for _, j := range js {
			followers[j] = append(followers[j], i)
		}
	}
	for s := range n {
		dist := make([]int, n)
		for i := range dist {
			dist[i] = -1
		}
		dist[s] = 0
		queue := []int{s}
		for len(queue) > 0 {
			at := queue[0]
			queue = queue[1:]
			for _, f := range followers[at] {
				if dist[f] < 0 {
					dist[f] = dist[at] + 1
					queue = append(queue, f)
				}
			}
		}
		for i, d := range dist {
			if i != s {
				sum += d
				most = max(most, d)
			}
		}
	}
	if n > 1 {
		mean = float64(sum) / float64(n*(n-1))
	}
	return mean, most
}

// fedDefinition publishes one definition on every node.
func fedDefinition(ctx context.Context, nodes []*fedNode) (*nostr.Event, string, error) {
	sk := nostr.GeneratePrivateKey()
	def := &nostr.Event{Kind: 4199, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"title", "bench"}, {"role", "tester"}}}
	def.Sign(sk)
	for _, n := range nodes {
		if err := n.r.Publish(ctx, def); err != nil {
			return nil, "", err
		}
	}
	return def, nostr.GeneratePrivateKey(), nil
}

// waitConnected publishes a probe lesson on node 0 and waits (up to 60 s)
// until every node has it: the syncers are connected and caught up.
func waitConnected(ctx context.Context, nodes []*fedNode, defID, sk string) error {
	probe := fedLesson(sk, defID, "probe")
	if err := nodes[0].r.Publish(ctx, probe); err != nil {
		return err
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		all := true
		for _, n := range nodes {
			if _, ok := n.arrived.Load(probe.ID); !ok {
				all = false
			}
		}
		if all {
			return nil
		}
		sleepCtx(ctx, 20*time.Millisecond)
	}
	return fmt.Errorf("bench federation: the probe lesson did not reach every node within 60 s")
}

func fedLesson(sk, defID, title string) *nostr.Event {
	evt := &nostr.Event{Kind: 4129, CreatedAt: nostr.Now(), Content: "lesson: " + title,
		Tags: nostr.Tags{{"title", title}, {"category", "bench"}, {"e", defID}}}
	evt.Sign(sk)
	return evt
}

// sentLesson is an injected lesson: where and when.
type sentLesson struct {
	id   string
	node int
	at   time.Time
}

// inject publishes the lessons at random nodes, one every Spacing.
func inject(ctx context.Context, rng *rand.Rand, nodes []*fedNode, sk, defID string, opts FederationOptions) []sentLesson {
	var out []sentLesson
	for i := range opts.Lessons {
		at := rng.IntN(len(nodes))
		evt := fedLesson(nodes[at].agent, defID, fmt.Sprintf("lesson %d", i))
		start := time.Now()
		if nodes[at].r.Publish(ctx, evt) == nil {
			out = append(out, sentLesson{evt.ID, at, start})
		}
		sleepCtx(ctx, opts.Spacing)
	}
	return out
}

// traffic runs fn and returns the bytes per node per minute it took
// (over window, or over fn's own duration when window is 0).
func traffic(nodes []*fedNode, fn func(), window time.Duration) int64 {
	before := int64(0)
	for _, n := range nodes {
		before += n.bytes.Load()
	}
	start := time.Now()
	fn()
	if window == 0 {
		window = time.Since(start)
	}
	after := int64(0)
	for _, n := range nodes {
		after += n.bytes.Load()
	}
	return int64(float64(after-before) / float64(len(nodes)) / window.Minutes())
}

// measure waits (up to 30 s) for every lesson to reach every node and
// fills the propagation figures.
func measure(ctx context.Context, nodes []*fedNode, sent []sentLesson, rep *FederationReport) {
	rep.Expected = len(sent) * (len(nodes) - 1)
	deadline := time.Now().Add(30 * time.Second)
	var delays []time.Duration
	for {
		delays = delays[:0]
		for _, s := range sent {
			for i, n := range nodes {
				if i == s.node {
					continue
				}
				if at, ok := n.arrived.Load(s.id); ok {
					delays = append(delays, at.(time.Time).Sub(s.at))
				}
			}
		}
		if len(delays) == rep.Expected || time.Now().After(deadline) {
			break
		}
		sleepCtx(ctx, 50*time.Millisecond)
	}
	rep.Delivered = len(delays)
	slices.Sort(delays)
	if len(delays) > 0 {
		rep.P50, rep.P99, rep.Max = delays[len(delays)/2], delays[len(delays)*99/100], delays[len(delays)-1]
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// WriteTable prints the report.
func (r *FederationReport) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "federation: %d nodes, each following %d; %d lessons at random nodes; %d CPUs, %s\n",
		r.Nodes, r.Peers, r.Lessons, r.Machine.NumCPU, r.Machine.GoVersion)
	fmt.Fprintf(w, "propagation (lesson published -> stored on another node): p50 %v, p99 %v, max %v; delivered %d of %d; hops mean %.2f, max %d\n",
		r.P50.Round(time.Millisecond), r.P99.Round(time.Millisecond), r.Max.Round(time.Millisecond), r.Delivered, r.Expected, r.MeanHops, r.MaxHops)
	fmt.Fprintf(w, "traffic per node: idle %d bytes/min, under load %d bytes/min\n", r.IdleBytesPerNodeMin, r.LoadBytesPerNodeMin)
	fmt.Fprintf(w, "restart: %d nodes down, %d lessons published meanwhile, every node holds them %v after the restart (%d of %d)\n",
		r.Restarted, r.RestartLessons, r.RestartConverged.Round(time.Millisecond), r.RestartDelivered, r.RestartExpected)
	if p := r.Partition; p != nil {
		fmt.Fprintf(w, "partition: two halves, %d lessons published; %d of %d held when it healed; after each anti-entropy round %v; converged in %d round(s), %v (longest round %v)\n",
			p.Lessons, p.Before, p.Expected, p.Delivered, p.Rounds, p.Converged.Round(time.Millisecond), p.RoundTime.Round(time.Millisecond))
	}
	if s := r.State; s != nil {
		fmt.Fprintf(w, "state partition: %d owners, %d shared documents each, %d edits on both sides (%d documents differed at the heal, %v at each later round); every replica identical %v after the heal = anti-entropy round %d (interval %v; agents of an owner up to %d relay hop(s) apart); %d digests, %d repair ops sent meanwhile\n",
			s.Owners, s.Docs, s.Edits, s.Diverged, s.DivergedPerRound, s.Converged.Round(time.Millisecond), s.Rounds, s.Interval, s.OverlayHops, s.Digests, s.RepairOps)
	}
	return nil
}
