package main

import (
	"context"
	"os"

	"github.com/agentnode/agentnode/bench"
)

// runBenchNegentropy: bench negentropy [--events N] [--dir D] [--json]:
// two in-process nodes with disjoint histories reconcile by NIP-77, then
// again after one gains 1%; each is compared with a full REQ download.
func runBenchNegentropy(ctx context.Context, m *Main, args []string) (tableWriter, bool, error) {
	var opts bench.NegentropyOptions
	fs, asJSON := m.newBenchFlagSet("bench negentropy", "bench negentropy [--events N] [--dir D] [--json]")
	fs.IntVar(&opts.Events, "events", bench.DefaultNegentropyEvents, "events only node A has, and as many only node B has")
	fs.StringVar(&opts.Dir, "dir", os.TempDir(), "parent of the data dirs (a real disk)")
	if err := parseBenchArgs(fs, args, "bench negentropy"); err != nil {
		return nil, false, err
	}
	rep, err := bench.Negentropy(ctx, opts)
	return rep, *asJSON, err
}
