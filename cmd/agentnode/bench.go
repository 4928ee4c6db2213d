package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/agentnode/agentnode/bench"
)

// benchUsage is the bench command's synopsis.
const benchUsage = `bench ingest [--events N] [--conns N] [--window N] [--dir D] [--seed N] [--json] [TARGETS]
       bench query  [--stored N] [--queries N] [--dir D] [--query-dir D] [--seed N] [--json] [TARGETS]
       bench fanout [--subs N] [--conns N] [--events N] [--dir D] [--json] [TARGETS]
       bench hostile [--events N] [--slow N] [--stored N] [--counts N] [--reqs N] [--dir D] [--json]
       bench crowded [--events N] [--event-bytes N] [--defs N] [--def-bytes N] [--conns N] [--dir D] [--json]   (memory under the read-path attacks)
       bench relay  [--events N] [--window N] [--stored N] [--queries N] [--subs N] [--dir D] [--query-dir D] [--seed N] [--json] [TARGETS]
       bench delivery --from ws://B --to ws://A [--name NAME] ... [--events N] [--json]   (live delivery latency, publish on B -> subscription on A)
       bench negentropy [--events N] [--dir D] [--json]   (NIP-77 sync of two nodes vs a REQ download)
       bench federation [--nodes N] [--peers N] [--lessons N] [--seed N] [--dir D] [--json]   (lesson propagation over N peered nodes)
       bench serve  --relay khatru+lmdb|agentnode [--listen ADDR] [--dir D]   (a bench relay in its own process, to be a --target)
TARGETS: running relays measured beside the in-process ones, repeatable:
       --target ws://host:port [--name NAME] [--target-pid PID]   (pid: CPU of that process from /proc)`

// tableWriter is every bench report.
type tableWriter interface{ WriteTable(w io.Writer) error }

// benchRunners are the bench subcommands.
var benchRunners = map[string]func(ctx context.Context, m *Main, args []string) (tableWriter, bool, error){
	"ingest":     runBenchIngest,
	"query":      runBenchQuery,
	"fanout":     runBenchFanout,
	"relay":      runBenchRelay,
	"hostile":    runBenchHostile,
	"crowded":    runBenchCrowded,
	"serve":      runBenchServe,
	"delivery":   runBenchDelivery,
	"negentropy": runBenchNegentropy, // bench_negentropy.go
	"federation": runBenchFederation, // bench_federation.go
}

func runBench(ctx context.Context, m *Main, args []string) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
		m.newFlagSet("bench", benchUsage).Usage()
		return errHelpShown
	}
	if len(args) == 0 || benchRunners[args[0]] == nil {
		return usagef("bench: want `agentnode %s`", benchUsage)
	}
	rep, asJSON, err := benchRunners[args[0]](ctx, m, args[1:])
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(m.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return rep.WriteTable(m.Stdout)
}

func runBenchIngest(ctx context.Context, m *Main, args []string) (tableWriter, bool, error) {
	var opts bench.IngestOptions
	fs, asJSON := m.newBenchFlagSet("bench ingest", benchUsage)
	fs.IntVar(&opts.Events, "events", bench.DefaultIngestEvents, "events per scenario and relay")
	fs.IntVar(&opts.Conns, "conns", bench.DefaultIngestConns, "publisher connections in the many-publishers scenario")
	fs.IntVar(&opts.Window, "window", bench.DefaultIngestWindow, "events in flight per connection in the many-publishers scenario")
	fs.StringVar(&opts.Dir, "dir", os.TempDir(), "parent of the data dirs (a real disk)")
	fs.Uint64Var(&opts.Seed, "seed", 0, "seed of the generated data (0: from the clock)")
	targets, err := parseTargetArgs(fs, args, "bench ingest")
	if err != nil {
		return nil, false, err
	}
	opts.Targets, opts.Progress = targets, m.Stderr
	rep, err := bench.RunIngest(ctx, opts)
	return rep, *asJSON, err
}

func runBenchFanout(ctx context.Context, m *Main, args []string) (tableWriter, bool, error) {
	var opts bench.FanoutOptions
	fs, asJSON := m.newBenchFlagSet("bench fanout", benchUsage)
	fs.IntVar(&opts.Subs, "subs", bench.DefaultFanoutSubs, "live subscriptions matching every event")
	fs.IntVar(&opts.Conns, "conns", bench.DefaultFanoutConns, "websockets the subscriptions are spread over")
	fs.IntVar(&opts.Events, "events", bench.DefaultFanoutEvents, "events published one at a time")
	fs.StringVar(&opts.Dir, "dir", os.TempDir(), "parent of the data dirs")
	targets, err := parseTargetArgs(fs, args, "bench fanout")
	if err != nil {
		return nil, false, err
	}
	opts.Targets, opts.Progress = targets, m.Stderr
	rep, err := bench.RunFanout(ctx, opts)
	return rep, *asJSON, err
}

func runBenchQuery(ctx context.Context, m *Main, args []string) (tableWriter, bool, error) {
	return runRelayPhases(ctx, m, args, "bench query", bench.PhaseQuery)
}

func runBenchRelay(ctx context.Context, m *Main, args []string) (tableWriter, bool, error) {
	return runRelayPhases(ctx, m, args, "bench relay")
}

// runRelayPhases runs bench.RunRelay with phases (none: all).
func runRelayPhases(ctx context.Context, m *Main, args []string, name string, phases ...string) (tableWriter, bool, error) {
	opts, asJSON, err := parseBenchFlags(m, name, args)
	if err != nil {
		return nil, false, err
	}
	opts.Phases = phases
	rep, err := bench.RunRelay(ctx, opts)
	return rep, asJSON, err
}

// parseBenchFlags reads `bench relay`'s (and `bench query`'s) flags into RelayOptions.
func parseBenchFlags(m *Main, name string, args []string) (opts bench.RelayOptions, asJSON bool, err error) {
	fs, jsonFlag := m.newBenchFlagSet(name, benchUsage)
	fs.IntVar(&opts.Events, "events", bench.DefaultEvents, "lessons sent per ingest run")
	fs.IntVar(&opts.Window, "window", bench.DefaultWindow, "events in flight in the windowed ingest run")
	fs.IntVar(&opts.Stored, "stored", bench.DefaultStored, "events stored before the query phase")
	fs.IntVar(&opts.Queries, "queries", bench.DefaultQueries, "queries of each kind per relay")
	fs.IntVar(&opts.Subs, "subs", bench.DefaultSubs, "live subscriptions opened per relay")
	fs.StringVar(&opts.Dir, "dir", os.TempDir(), "parent of the ingest and memory data dirs (a real disk)")
	fs.StringVar(&opts.QueryDir, "query-dir", "", "parent of the query-phase data dirs (default /dev/shm if present, else --dir)")
	fs.Uint64Var(&opts.Seed, "seed", 0, "seed of the generated data (0: from the clock)")
	if opts.Targets, err = parseTargetArgs(fs, args, name); err != nil {
		return opts, false, err
	}
	opts.Progress = m.Stderr
	return opts, *jsonFlag, nil
}

// newBenchFlagSet is a bench subcommand's flag set, with its --json flag.
func (m *Main) newBenchFlagSet(name, usage string) (fs *flag.FlagSet, asJSON *bool) {
	fs = m.newFlagSet(name, usage)
	return fs, fs.Bool("json", false, "print the report as JSON")
}

// parseTargetArgs adds the target flags to fs, parses args (see
// parseBenchArgs) and returns the targets they name.
func parseTargetArgs(fs *flag.FlagSet, args []string, name string) ([]bench.Target, error) {
	var tf targetFlags
	tf.register(fs)
	if err := parseBenchArgs(fs, args, name); err != nil {
		return nil, err
	}
	return tf.targets()
}

// targetFlags are the repeatable --target, --name and --target-pid flags,
// paired by their order.
type targetFlags struct{ urls, names, pids listFlag }

func (tf *targetFlags) register(fs *flag.FlagSet) {
	fs.Var(&tf.urls, "target", "a running relay to measure beside the in-process ones, ws://host:port (repeatable); ws://a,ws://b: instances of one relay, publisher connections spread round-robin (ingest)")
	fs.Var(&tf.names, "name", "the name of the --target of the same position in the report (repeatable)")
	fs.Var(&tf.pids, "target-pid", "the pid of the --target of the same position, for its CPU per query (repeatable)")
}

// targets pairs the flags; a target without a name is called by its URL.
func (tf *targetFlags) targets() ([]bench.Target, error) {
	if len(tf.names) > len(tf.urls) || len(tf.pids) > len(tf.urls) {
		return nil, usagef("bench: more --name or --target-pid than --target")
	}
	var out []bench.Target
	for i, u := range tf.urls {
		for _, part := range strings.Split(u, ",") {
			if !strings.HasPrefix(part, "ws://") && !strings.HasPrefix(part, "wss://") {
				return nil, usagef("bench: --target %q is not a ws:// or wss:// URL (or a comma-separated list of them)", u)
			}
		}
		t := bench.Target{Name: u, URL: u}
		if i < len(tf.names) {
			t.Name = tf.names[i]
		}
		if i < len(tf.pids) {
			pid, err := strconv.Atoi(tf.pids[i])
			if err != nil || pid <= 0 {
				return nil, usagef("bench: --target-pid %q is not a pid", tf.pids[i])
			}
			t.PID = pid
		}
		out = append(out, t)
	}
	return out, nil
}

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// parseBenchArgs parses a bench subcommand's flags; it takes no arguments.
func parseBenchArgs(fs *flag.FlagSet, args []string, name string) error {
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("%s: unexpected argument %q", name, fs.Arg(0))
	}
	return nil
}

func runBenchHostile(ctx context.Context, m *Main, args []string) (tableWriter, bool, error) {
	var opts bench.HostileOptions
	fs, asJSON := m.newBenchFlagSet("bench hostile", benchUsage)
	fs.IntVar(&opts.Events, "events", bench.DefaultHostileEvents, "events published one at a time, per phase")
	fs.IntVar(&opts.SlowReaders, "slow", bench.DefaultHostileSlowReaders, "subscribers that never read")
	fs.IntVar(&opts.Stored, "stored", bench.DefaultHostileStored, "events stored before the flood")
	fs.IntVar(&opts.Counts, "counts", bench.DefaultHostileCounts, "pipelined COUNT {} of the flood")
	fs.IntVar(&opts.Reqs, "reqs", bench.DefaultHostileReqs, "pipelined REQ limit 500 of the flood")
	fs.StringVar(&opts.Dir, "dir", "/tmp", "parent of the data dirs (a real disk)")
	if err := fs.Parse(args); err != nil {
		return nil, false, err
	}
	opts.Progress = m.Stderr
	rep, err := bench.RunHostile(ctx, opts)
	return rep, *asJSON, err
}

func runBenchCrowded(ctx context.Context, m *Main, args []string) (tableWriter, bool, error) {
	var opts bench.CrowdedOptions
	fs, asJSON := m.newBenchFlagSet("bench crowded", benchUsage)
	fs.IntVar(&opts.Events, "events", bench.DefaultCrowdedEvents, "events stored at one second")
	fs.IntVar(&opts.EventBytes, "event-bytes", bench.DefaultCrowdedEventBytes, "size of each")
	fs.IntVar(&opts.Defs, "defs", bench.DefaultCrowdedDefs, "definitions stored, all matching the search")
	fs.IntVar(&opts.DefBytes, "def-bytes", bench.DefaultCrowdedDefBytes, "size of each")
	fs.IntVar(&opts.Conns, "conns", bench.DefaultCrowdedConns, "connections sending 4 search COUNTs each")
	fs.StringVar(&opts.Dir, "dir", "/tmp", "parent of the data dirs (a real disk)")
	if err := parseBenchArgs(fs, args, "bench crowded"); err != nil {
		return nil, false, err
	}
	opts.Progress = m.Stderr
	rep, err := bench.RunCrowded(ctx, opts)
	return rep, *asJSON, err
}

// runBenchServe serves one of the bench's relays until interrupted.
func runBenchServe(ctx context.Context, m *Main, args []string) (tableWriter, bool, error) {
	fs := m.newFlagSet("bench serve", benchUsage)
	name := fs.String("relay", bench.NameKhatru, "the relay to serve: "+bench.NameKhatru+" or "+bench.NameAgentnode)
	listen := fs.String("listen", "127.0.0.1:7448", "address to listen on")
	dir := fs.String("dir", "", "data directory (required)")
	if err := parseBenchArgs(fs, args, "bench serve"); err != nil {
		return nil, false, err
	}
	if *dir == "" {
		return nil, false, usagef("bench serve: --dir is required")
	}
	err := bench.ServeStandalone(ctx, *name, *listen, *dir, func(url string) {
		fmt.Fprintf(m.Stderr, "bench serve: %s on %s (pid %d)\n", *name, url, os.Getpid())
	})
	return emptyReport{}, false, err
}

// emptyReport prints nothing.
type emptyReport struct{}

func (emptyReport) WriteTable(io.Writer) error { return nil }

// runBenchDelivery measures live delivery latency between running relays
// (the instances of one relay on PostgreSQL: docs/SCALE.md).
func runBenchDelivery(ctx context.Context, m *Main, args []string) (tableWriter, bool, error) {
	var opts bench.DeliveryOptions
	var from, to, names listFlag
	fs, asJSON := m.newBenchFlagSet("bench delivery", benchUsage)
	fs.Var(&from, "from", "the relay events are published on, ws://host:port (repeatable, pairs with --to)")
	fs.Var(&to, "to", "the relay whose live subscription receives them (repeatable)")
	fs.Var(&names, "name", "the name of the route of the same position (repeatable)")
	fs.IntVar(&opts.Events, "events", bench.DefaultDeliveryEvents, "events per route, published one at a time")
	if err := parseBenchArgs(fs, args, "delivery"); err != nil {
		return nil, false, err
	}
	if len(from) == 0 || len(from) != len(to) || len(names) > len(from) {
		return nil, false, usagef("bench delivery: want as many --from as --to, at least one")
	}
	for i := range from {
		p := bench.DeliveryPair{Name: from[i] + " -> " + to[i], From: from[i], To: to[i]}
		if i < len(names) {
			p.Name = names[i]
		}
		opts.Pairs = append(opts.Pairs, p)
	}
	rep, err := bench.RunDelivery(ctx, opts)
	return rep, *asJSON, err
}
