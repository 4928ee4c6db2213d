package agentd

import (
	"context"
	"slices"
)

// AddNudge attaches a nudge (kind 4201: nevent, note or hex id; it must be
// on the local relay) to the agent, after the ones already attached. It
// reports whether anything changed (false: already attached).
func (d *Daemon) AddNudge(ctx context.Context, agent, nudgeRef string) (Agent, bool, error) {
	n, err := d.nudge(ctx, nudgeRef)
	if err != nil {
		return Agent{}, false, err
	}
	return d.editNudges(ctx, agent, func(ids []string) []string {
		if slices.Contains(ids, n.ID) {
			return ids
		}
		return append(ids, n.ID)
	})
}

// RemoveNudge detaches a nudge (nevent, note or hex id) from the agent. It
// reports whether anything changed (false: it was not attached). The nudge
// need not be on the relay any more.
func (d *Daemon) RemoveNudge(ctx context.Context, agent, nudgeRef string) (Agent, bool, error) {
	id, err := nudgeID(nudgeRef)
	if err != nil {
		return Agent{}, false, err
	}
	return d.editNudges(ctx, agent, func(ids []string) []string {
		return slices.DeleteFunc(ids, func(x string) bool { return x == id })
	})
}

// editNudges applies edit to the agent's nudge list and saves a change.
func (d *Daemon) editNudges(ctx context.Context, agent string, edit func([]string) []string) (Agent, bool, error) {
	if err := d.begin(); err != nil {
		return Agent{}, false, err
	}
	defer d.mu.Unlock()
	a, err := d.lookup(agent)
	if err != nil {
		return Agent{}, false, err
	}
	next := a.clone()
	next.Nudges = edit(slices.Clone(a.Nudges))
	if slices.Equal(next.Nudges, a.Nudges) {
		return a, false, nil
	}
	if err := d.reg.put(ctx, next); err != nil {
		return Agent{}, false, err
	}
	d.live.set(next)
	d.changed()
	return next, true, nil
}
