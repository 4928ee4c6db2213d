package main

import (
	"context"
	"fmt"

	"github.com/agentnode/agentnode/agentd/state"
)

const stateDeleteUsage = "state delete --owner NPUB --schema URI --id ID [--hard] [--agent NPUB] [--scope S] [--data DIR]"

// runStateDelete is state.delete: a tombstone (the document leaves reads,
// history stays; replicated), or with --hard a purge (row, ops and
// snapshot dropped; replicas drop it too).
func runStateDelete(ctx context.Context, m *Main, args []string) error {
	f := &stateFlags{}
	fs := m.newFlagSet("state delete", stateDeleteUsage)
	m.addStateFlags(fs, f, true)
	hard := fs.Bool("hard", false, "purge instead of tombstoning")
	if err := parseNoArgs(fs, "state delete", args); err != nil {
		return err
	}
	if err := f.needDoc("state delete"); err != nil {
		return err
	}
	mode := "tombstone"
	if *hard {
		mode = "hard"
	}
	return withState(ctx, m, "state delete", f, func(rt *state.Runtime, c state.Caller) error {
		if err := rt.Delete(ctx, c, f.schema, f.id, mode); err != nil {
			return err
		}
		fmt.Fprintf(m.Stdout, "deleted %s %s (%s)\n", f.schema, f.id, mode)
		return nil
	})
}

const stateGCUsage = "state gc [--data DIR] [--json]"

// runStateGC runs the lifecycle (x-ttl, x-retention, x-compression) once
// over the whole store, as serve does on its schedule, and prints the
// counts.
func runStateGC(ctx context.Context, m *Main, args []string) error {
	var data string
	var asJSON bool
	fs := m.newFlagSet("state gc", stateGCUsage)
	fs.StringVar(&data, "data", "", "data directory (default $AGENTNODE_DATA or ./agentnode-data)")
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	if err := parseNoArgs(fs, "state gc", args); err != nil {
		return err
	}
	rt, err := openState(ctx, m, data)
	if err != nil {
		return err
	}
	defer rt.Close(context.Background())
	rep, err := state.NewLifecycle(rt, state.LifecycleOptions{}).RunOnce(ctx)
	if err != nil {
		return fmt.Errorf("state gc: %w", err)
	}
	if asJSON {
		return writeJSON(m.Stdout, rep)
	}
	fmt.Fprintf(m.Stdout, "expired ops %d, purged documents %d, evicted items %d, snapshots %d\n",
		rep.ExpiredOps, rep.PurgedDocs, rep.EvictedItems, rep.Snapshots)
	return nil
}

// warnDocument tells the operator, on stderr, what the printed document
// does not say by itself: that it is known partial, and the concurrent
// values of its multi-value registers; prefix (e.g. the document's id)
// starts each line.
func (m *Main) warnDocument(d *state.Document, prefix string) {
	if d.Incomplete != "" {
		fmt.Fprintf(m.Stderr, "%swarning: this replica lacks part of the document's history (%s); replication will fill it in\n", prefix, d.Incomplete)
	}
	for field, vals := range d.Concurrent {
		fmt.Fprintf(m.Stderr, "%snote: %s has %d concurrent values:", prefix, field, len(vals))
		for _, v := range vals {
			fmt.Fprintf(m.Stderr, " %s", v)
		}
		fmt.Fprintln(m.Stderr)
	}
}
