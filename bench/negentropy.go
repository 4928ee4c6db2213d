package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/relayclient"
	"github.com/agentnode/agentnode/relay"
	"github.com/agentnode/agentnode/relay/negsync"
)

// DefaultNegentropyEvents is each node's own history in `bench negentropy`.
const DefaultNegentropyEvents = 10_000

// NegentropyOptions tune Negentropy.
type NegentropyOptions struct {
	Events int    // events only A has, and as many only B has
	Dir    string // parent of the data dirs
}

// NegentropyReport compares a NIP-77 sync with a REQ download, per scenario.
type NegentropyReport struct {
	Machine   Machine              `json:"machine"`
	Events    int                  `json:"events"`
	Scenarios []NegentropyScenario `json:"scenarios"`
}

// NegentropyScenario is one reconciliation of node A with node B.
type NegentropyScenario struct {
	Name           string  `json:"name"`
	Dir            string  `json:"dir"`
	EventsA        int     `json:"events_a"`
	EventsB        int     `json:"events_b"`
	OnlyA          int     `json:"only_a"`
	OnlyB          int     `json:"only_b"`
	Rounds         int     `json:"rounds"`
	ReconcileBytes int64   `json:"reconcile_bytes"`
	SyncBytes      int64   `json:"sync_bytes"` // reconciliation and events, both ways
	SyncSeconds    float64 `json:"sync_seconds"`
	REQBytes       int64   `json:"req_bytes"` // A downloading all of B's events by REQ
	REQSeconds     float64 `json:"req_seconds"`
}

// benchNode is an in-process relay on loopback.
type benchNode struct {
	*relay.Relay
	url  string
	stop func()
}

func openBenchNode(ctx context.Context, dir string) (*benchNode, error) {
	r, err := relay.Open(ctx, relay.Config{DataDir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Limits: relay.Limits{EventsPerSecond: 1_000_000, EventsBurst: 1_000_000, RequestsPerSecond: 10_000, RequestsBurst: 10_000}})
	if err != nil {
		return nil, err
	}
	srv := httptest.NewServer(r)
	return &benchNode{Relay: r, url: "ws" + strings.TrimPrefix(srv.URL, "http"), stop: func() {
		srv.Close()
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r.Close(cctx)
	}}, nil
}

// fillNode stores n signed notes of fresh keys with 64 publishers in flight.
func fillNode(ctx context.Context, r *relay.Relay, n int, tag string) error {
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	base := nostr.Now() - nostr.Timestamp(n)
	for w := range 64 {
		wg.Go(func() {
			sk := nostr.GeneratePrivateKey()
			for i := w; i < n; i += 64 {
				evt := &nostr.Event{Kind: 1, CreatedAt: base + nostr.Timestamp(i), Content: fmt.Sprintf("%s note %d: %s", tag, i, strings.Repeat("x", 100))}
				evt.Sign(sk)
				if err := r.Publish(ctx, evt); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// Negentropy measures two scenarios on two nodes A and B: disjoint
// histories of Events each (sync both ways), then, once they agree, B
// gains 1% new events (sync down). Each is compared with A downloading
// everything B holds by REQ, which is what a catch-up without NIP-77
// sends. Bytes are websocket payloads.
func Negentropy(ctx context.Context, opts NegentropyOptions) (*NegentropyReport, error) {
	root, err := os.MkdirTemp(opts.Dir, "bench-negentropy-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	a, err := openBenchNode(ctx, root+"/a")
	if err != nil {
		return nil, err
	}
	defer a.stop()
	b, err := openBenchNode(ctx, root+"/b")
	if err != nil {
		return nil, err
	}
	defer b.stop()
	rep := &NegentropyReport{Machine: describeMachine(opts.Dir, opts.Dir), Events: opts.Events}
	if err := fillNode(ctx, a.Relay, opts.Events, "a"); err != nil {
		return nil, err
	}
	if err := fillNode(ctx, b.Relay, opts.Events, "b"); err != nil {
		return nil, err
	}
	sc, err := negScenario(ctx, root, a, b, "disjoint histories", negsync.Both)
	if err != nil {
		return nil, err
	}
	rep.Scenarios = append(rep.Scenarios, sc)
	if err := fillNode(ctx, b.Relay, max(opts.Events/100, 1), "b-new"); err != nil {
		return nil, err
	}
	sc, err = negScenario(ctx, root, a, b, "B has 1% more", negsync.Down)
	if err != nil {
		return nil, err
	}
	rep.Scenarios = append(rep.Scenarios, sc)
	return rep, nil
}

// negScenario measures the REQ download first (into a throwaway node),
// then the NIP-77 sync of A with B.
func negScenario(ctx context.Context, root string, a, b *benchNode, name string, dir negsync.Direction) (NegentropyScenario, error) {
	sc := NegentropyScenario{Name: name, Dir: map[negsync.Direction]string{negsync.Down: "down", negsync.Both: "both"}[dir]}
	sc.EventsA, sc.EventsB = count(ctx, a.Relay), count(ctx, b.Relay)
	if err := reqBaseline(ctx, root+"/req-"+sc.Dir, b.url, &sc); err != nil {
		return sc, err
	}
	conn, err := relayclient.Dial(ctx, b.url, relayclient.Options{Verify: true})
	if err != nil {
		return sc, err
	}
	defer conn.Close()
	start := time.Now()
	res, err := negsync.Sync(ctx, conn, a.Relay, negsync.Options{Dir: dir, MaxItems: 10_000_000})
	sc.SyncSeconds = time.Since(start).Seconds()
	sc.OnlyA, sc.OnlyB, sc.Rounds = res.OnlyHere, res.OnlyThere, res.Rounds
	sc.ReconcileBytes, sc.SyncBytes = res.ReconcileBytes, res.BytesIn+res.BytesOut
	return sc, err
}

// reqBaseline downloads all of B by REQ into a fresh node.
func reqBaseline(ctx context.Context, dir, url string, sc *NegentropyScenario) error {
	c, err := openBenchNode(ctx, dir)
	if err != nil {
		return err
	}
	defer c.stop()
	conn, err := relayclient.Dial(ctx, url, relayclient.Options{Verify: true})
	if err != nil {
		return err
	}
	defer conn.Close()
	start := time.Now()
	res, err := negsync.Download(ctx, conn, c.Relay, nostr.Filter{}, 5000)
	sc.REQSeconds = time.Since(start).Seconds()
	sc.REQBytes = res.BytesIn + res.BytesOut
	return err
}

func count(ctx context.Context, r *relay.Relay) int {
	n, _ := r.Count(ctx, nostr.Filter{})
	return int(n)
}

// WriteTable prints the report.
func (r *NegentropyReport) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "NIP-77 sync vs REQ download, %d events per node; %d CPUs, %s, data on %s\n", r.Events, r.Machine.NumCPU, r.Machine.GoVersion, r.Machine.DirFS)
	fmt.Fprintf(w, "%-20s %-5s %9s %9s %8s %8s %6s %14s %14s %8s %14s %8s\n",
		"scenario", "dir", "A", "B", "only A", "only B", "rounds", "reconcile B", "sync bytes", "sync s", "REQ bytes", "REQ s")
	for _, s := range r.Scenarios {
		fmt.Fprintf(w, "%-20s %-5s %9d %9d %8d %8d %6d %14d %14d %8.2f %14d %8.2f\n", s.Name, s.Dir, s.EventsA, s.EventsB,
			s.OnlyA, s.OnlyB, s.Rounds, s.ReconcileBytes, s.SyncBytes, s.SyncSeconds, s.REQBytes, s.REQSeconds)
	}
	return nil
}
