package main

import (
	"context"
	"os"
	"time"

	"github.com/agentnode/agentnode/bench"
)

// runBenchFederation: bench federation [--nodes N] [--peers N] [--lessons N] [--spacing D] [--seed N] [--idle D] [--cpuprofile F] [--push=false] [--state-owners N] [--state-docs N] [--state-edits N] [--state-interval D] [--state-owner-relay=false] [--dir D] [--json]:
// N in-process nodes on loopback, each following --peers others for one
// definition's lessons; lessons injected at random nodes; propagation
// p50/p99 and traffic per node; the restart of a third, the partition
// heal of the lessons and, unless --state-owners 0, of shared-state
// documents (bench/federation_state.go).
func runBenchFederation(ctx context.Context, m *Main, args []string) (tableWriter, bool, error) {
	var opts bench.FederationOptions
	fs, asJSON := m.newBenchFlagSet("bench federation", "bench federation [--nodes N] [--peers N] [--lessons N] [--spacing D] [--seed N] [--idle D] [--cpuprofile F] [--push=false] [--state-owners N] [--state-docs N] [--state-edits N] [--state-interval D] [--state-owner-relay=false] [--dir D] [--json]")
	fs.IntVar(&opts.Nodes, "nodes", bench.DefaultFederationNodes, "nodes")
	fs.IntVar(&opts.Peers, "peers", bench.DefaultFederationPeers, "relays each node follows")
	fs.IntVar(&opts.Lessons, "lessons", bench.DefaultFederationLessons, "lessons injected at random nodes")
	fs.DurationVar(&opts.Spacing, "spacing", 20*time.Millisecond, "time between two injected lessons")
	fs.BoolVar(&opts.Push, "push", true, "each node's agent signs the lessons published there and its syncer pushes them to its peers, as serve --peer does")
	fs.StringVar(&opts.CPUProfile, "cpuprofile", "", "write the CPU profile of the propagation phase to this file")
	fs.Uint64Var(&opts.Seed, "seed", 1, "seed of the topology and the injection points")
	fs.DurationVar(&opts.Idle, "idle", 10*time.Second, "window of the idle traffic measurement (pings every 30 s: use 60s or more)")
	fs.IntVar(&opts.StateOwners, "state-owners", bench.DefaultStateOwners, "owners of the state phase's agents (one agent per node); 0 skips the state phase")
	fs.IntVar(&opts.StateDocs, "state-docs", bench.DefaultStateDocs, "shared documents per owner in the state phase")
	fs.IntVar(&opts.StateEdits, "state-edits", bench.DefaultStateEdits, "edits of every document by every agent of its owner while partitioned")
	fs.DurationVar(&opts.StateInterval, "state-interval", bench.DefaultStateInterval, "anti-entropy interval of the state phase's replicators")
	fs.BoolVar(&opts.StateOwnerRelay, "state-owner-relay", true, "each agent's replicator also links to its owner's relay (the node of the owner's first agent), as with the owner's NIP-65 relays")
	fs.StringVar(&opts.Dir, "dir", os.TempDir(), "parent of the data dirs")
	if err := parseBenchArgs(fs, args, "bench federation"); err != nil {
		return nil, false, err
	}
	rep, err := bench.Federation(ctx, opts)
	return rep, *asJSON, err
}
