package agentd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// recordsTimeout bounds a registry write to a Records backing under the
// caller's ctx.
const recordsTimeout = 30 * time.Second

// loadRecords reads the registry from a Records backing (Config.Records):
// the daemon's copy, written through on every change.
func loadRecords(ctx context.Context, rec Records) (*registry, error) {
	list, err := rec.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("agentd: read records: %w", err)
	}
	r := &registry{records: rec}
	for _, a := range list {
		r.agents = append(r.agents, a.clone())
	}
	return r, nil
}

func (r *registry) putRecord(ctx context.Context, a Agent) error {
	ctx, cancel := context.WithTimeout(ctx, recordsTimeout)
	defer cancel()
	if err := r.records.Put(ctx, a); err != nil {
		return fmt.Errorf("agentd: write record: %w", err)
	}
	if i := r.index(a.PubKey); i >= 0 {
		r.agents[i] = a.clone()
	} else {
		r.agents = append(r.agents, a.clone())
	}
	return nil
}

// remember puts a in the copy only (the backing has it already).
func (r *registry) remember(a Agent) {
	if i := r.index(a.PubKey); i >= 0 {
		r.agents[i] = a.clone()
	} else {
		r.agents = append(r.agents, a.clone())
	}
}

func (r *registry) removeRecord(ctx context.Context, pubkey string) error {
	ctx, cancel := context.WithTimeout(ctx, recordsTimeout)
	defer cancel()
	if err := r.records.Remove(ctx, pubkey); err != nil && !errors.Is(err, ErrUnknownAgent) {
		return fmt.Errorf("agentd: remove record: %w", err)
	}
	r.agents = slices.DeleteFunc(r.agents, func(a Agent) bool { return a.PubKey == pubkey })
	return nil
}

// Reload reads the installed agents again from Config.Records (another
// instance may have installed, changed or removed some): new and changed
// agents are recomposed, removed ones forgotten. Without Config.Records it
// does nothing.
func (d *Daemon) Reload(ctx context.Context) error {
	if d.cfg.Records == nil {
		return nil
	}
	fresh, err := loadRecords(ctx, d.cfg.Records)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, a := range d.reg.agents {
		if _, ok := fresh.get(a.PubKey); !ok {
			d.live.drop(a.PubKey)
		}
	}
	for _, a := range fresh.agents {
		if old, ok := d.reg.get(a.PubKey); !ok || !sameAgent(old, a) {
			d.live.set(a)
		}
	}
	d.reg = fresh
	d.caps.invalidate()
	d.changed()
	d.signal()
	return nil
}

// sameAgent reports whether two records of one agent are equal.
func sameAgent(a, b Agent) bool {
	return a.Name == b.Name && a.Owner == b.Owner && a.DefinitionID == b.DefinitionID && a.DefinitionKey == b.DefinitionKey &&
		a.InstalledFrom == b.InstalledFrom && slices.Equal(a.Nudges, b.Nudges) && a.InstalledAt.Equal(b.InstalledAt) &&
		a.UpgradedAt.Equal(b.UpgradedAt) && a.AutoUpgrade == b.AutoUpgrade
}

// Placement places agents among instances (agentd/lease.Manager).
type Placement interface {
	Add(ctx context.Context, agent string) error
	Remove(ctx context.Context, agent string) error
}

// place tells Config.Placement that agent was installed (on) or removed.
func (d *Daemon) place(ctx context.Context, agent string, on bool) {
	if d.cfg.Placement == nil {
		return
	}
	f := d.cfg.Placement.Remove
	if on {
		f = d.cfg.Placement.Add
	}
	if err := f(ctx, agent); err != nil {
		d.log.Error("agent placement not updated", "agent", agent, "installed", on, "err", err)
	}
}
