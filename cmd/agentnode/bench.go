package main

import (
	"context"
	"encoding/json"
	"os"

	"github.com/agentnode/agentnode/bench"
)

func init() {
	commands["bench"] = command{"measure the relay against plain khatru+lmdb (bench relay)", runBench}
}

// benchUsage is the bench command's synopsis.
const benchUsage = "bench relay [--events N] [--window N] [--stored N] [--queries N] [--subs N] [--dir D] [--query-dir D] [--seed N] [--json]"

func runBench(ctx context.Context, m *Main, args []string) error {
	if len(args) == 0 || args[0] != "relay" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			m.newFlagSet("bench", benchUsage).Usage()
			return errHelpShown
		}
		return usagef("bench: want `agentnode %s`", benchUsage)
	}
	opts, asJSON, err := parseBenchFlags(m, args[1:])
	if err != nil {
		return err
	}
	rep, err := bench.RunRelay(ctx, opts)
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

// parseBenchFlags reads `bench relay`'s flags into RelayOptions.
func parseBenchFlags(m *Main, args []string) (opts bench.RelayOptions, asJSON bool, err error) {
	fs := m.newFlagSet("bench", benchUsage)
	fs.IntVar(&opts.Events, "events", bench.DefaultEvents, "lessons sent per ingest run")
	fs.IntVar(&opts.Window, "window", bench.DefaultWindow, "events in flight in the windowed ingest run")
	fs.IntVar(&opts.Stored, "stored", bench.DefaultStored, "events stored before the query phase")
	fs.IntVar(&opts.Queries, "queries", bench.DefaultQueries, "queries of each kind per relay")
	fs.IntVar(&opts.Subs, "subs", bench.DefaultSubs, "live subscriptions opened per relay")
	fs.StringVar(&opts.Dir, "dir", os.TempDir(), "parent of the ingest and memory data dirs (a real disk)")
	fs.StringVar(&opts.QueryDir, "query-dir", "", "parent of the query-phase data dirs (default /dev/shm if present, else --dir)")
	fs.Uint64Var(&opts.Seed, "seed", 0, "seed of the generated data (0: from the clock)")
	fs.BoolVar(&asJSON, "json", false, "print the report as JSON")
	if err := parseFlags(fs, args); err != nil {
		return opts, false, err
	}
	if fs.NArg() > 0 {
		return opts, false, usagef("bench relay: unexpected argument %q", fs.Arg(0))
	}
	opts.Progress = m.Stderr
	return opts, asJSON, nil
}
