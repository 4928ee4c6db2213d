package main

import (
	"context"
	"fmt"
	"time"

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
	fs.StringVar(&data, "data", m.envOr("AGENTNODE_DATA", DefaultDataDir), "data directory (env AGENTNODE_DATA)")
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
	fmt.Fprintln(m.Stdout, rep)
	return nil
}

const stateStatsUsage = "state stats [--data DIR] [--json]"

// runStateStats prints what the lifecycle passes over the store did (the
// last one, and the sums since the first), whoever ran them: serve on its
// schedule or `state gc`.
func runStateStats(ctx context.Context, m *Main, args []string) error {
	var data string
	var asJSON bool
	fs := m.newFlagSet("state stats", stateStatsUsage)
	fs.StringVar(&data, "data", m.envOr("AGENTNODE_DATA", DefaultDataDir), "data directory (env AGENTNODE_DATA)")
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	if err := parseNoArgs(fs, "state stats", args); err != nil {
		return err
	}
	rt, err := openState(ctx, m, data)
	if err != nil {
		return err
	}
	defer rt.Close(context.Background())
	st, err := rt.LifecycleStatus(ctx)
	if err != nil {
		return fmt.Errorf("state stats: %w", err)
	}
	if asJSON {
		return writeJSON(m.Stdout, map[string]any{"lifecycle": st})
	}
	if st.Passes == 0 {
		fmt.Fprintln(m.Stdout, "lifecycle: no pass yet (serve runs one every state.lifecycle_seconds; `agentnode state gc` runs one now)")
		return nil
	}
	fmt.Fprintf(m.Stdout, "lifecycle last pass %s: %s\n", st.LastAt.UTC().Format(time.RFC3339), st.Last)
	fmt.Fprintf(m.Stdout, "lifecycle %d passes since %s: %s\n", st.Passes, st.Since.UTC().Format(time.RFC3339), st.Totals)
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
