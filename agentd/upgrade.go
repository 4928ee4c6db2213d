package agentd

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/agentnode/agentnode/events"
)

// FieldChange is one definition field that differs between two versions.
type FieldChange struct {
	Field string `json:"field"` // title, role, instructions, use-criteria, description, image, version, slug
	From  string `json:"from"`
	To    string `json:"to"`
}

// UpgradePlan is what switching an agent to another version of its
// definition changes. Applied tells whether the switch was made.
type UpgradePlan struct {
	Agent          string            `json:"agent"`
	From           DefinitionSummary `json:"from"`
	To             DefinitionSummary `json:"to"`
	UpToDate       bool              `json:"up_to_date"` // From and To are the same version
	Changes        []FieldChange     `json:"changes"`
	ToolsAdded     []string          `json:"tools_added"`
	ToolsRemoved   []string          `json:"tools_removed"`
	ContentChanged bool              `json:"content_changed"` // the markdown content differs
	// FilesAdded and FilesRemoved name the files (kind-1063 references)
	// the new version adds and drops; applying replaces the agent's files.
	FilesAdded   []string `json:"files_added"`
	FilesRemoved []string `json:"files_removed"`
	Applied      bool     `json:"applied"`
}

// PlanUpgrade shows what Upgrade would change, changing nothing. to names
// the target version (any reference ParseDefinitionRef takes); empty means
// the latest stored version of the agent's definition.
func (d *Daemon) PlanUpgrade(ctx context.Context, agent, to string) (UpgradePlan, error) {
	a, err := d.Lookup(agent)
	if err != nil {
		return UpgradePlan{}, err
	}
	plan, _, err := d.plan(ctx, a, to)
	return plan, err
}

// Upgrade switches the agent to another version of its definition (to, or
// the latest when empty): the registry records the new version and the
// agent publishes a new kind 0 pointing at it, so that siblings verify it
// under the new version. Lessons of the new version apply from then on.
// When the version's files differ, they replace the agent's files
// (upgrade_files.go): fetched and verified first, swapped whole, nothing
// changed if one fails (ErrFileUnavailable). Upgrades are explicit (this
// call) or, per agent, automatic (AutoUpgrade).
func (d *Daemon) Upgrade(ctx context.Context, agent, to string) (UpgradePlan, error) {
	a, err := d.Lookup(agent)
	if err != nil {
		return UpgradePlan{}, err
	}
	return d.upgrade(ctx, a, to, false)
}

// ErrUpgradeRaced: the agent changed (another upgrade) while the new
// version's files were fetched.
var ErrUpgradeRaced = errors.New("the agent changed during the upgrade: try again")

// upgrade plans, fetches the new version's files without holding d.mu
// (fetches take time), then applies under d.mu if a still runs the
// version planned from (and, auto, still opts in).
func (d *Daemon) upgrade(ctx context.Context, a Agent, to string, auto bool) (UpgradePlan, error) {
	plan, target, err := d.plan(ctx, a, to)
	if err != nil || plan.UpToDate {
		return plan, err
	}
	files, err := d.stageUpgrade(ctx, a, target, plan)
	if err != nil {
		return plan, err
	}
	if err := d.begin(); err != nil {
		files.discard()
		return plan, err
	}
	defer d.mu.Unlock()
	cur, ok := d.reg.get(a.PubKey)
	switch {
	case ok && auto && !cur.AutoUpgrade:
		files.discard()
		return plan, nil
	case !ok || cur.DefinitionID != a.DefinitionID:
		files.discard()
		return plan, fmt.Errorf("%w: %s", ErrUpgradeRaced, a.PubKey)
	}
	return d.apply(ctx, cur, plan, target, files)
}

// apply switches a to target and its files; the caller holds d.mu.
func (d *Daemon) apply(ctx context.Context, a Agent, plan UpgradePlan, target *events.Definition, files upgradeFiles) (UpgradePlan, error) {
	undo, commit, err := d.swap(a.PubKey, files)
	if err != nil {
		return plan, err
	}
	next := a.clone()
	next.DefinitionID, next.UpgradedAt = target.ID, now()
	if _, err := d.publishProfile(ctx, next, target); err != nil {
		return plan, errors.Join(err, undo())
	}
	if err := d.reg.put(ctx, next); err != nil {
		return plan, errors.Join(err, undo())
	}
	commit()
	d.live.set(next)
	d.changed()
	plan.Applied = true
	d.log.Info("agent upgraded", "agent", a.PubKey, "from", plan.From.ID, "to", plan.To.ID, "version", plan.To.Version,
		"files_added", len(plan.FilesAdded), "files_removed", len(plan.FilesRemoved))
	return plan, nil
}

// plan resolves the target version and diffs it against the current one.
func (d *Daemon) plan(ctx context.Context, a Agent, to string) (UpgradePlan, *events.Definition, error) {
	cur, err := d.definition(ctx, a.DefinitionID)
	if err != nil {
		return UpgradePlan{}, nil, err
	}
	target, err := d.target(ctx, a, to)
	if err != nil {
		return UpgradePlan{}, nil, err
	}
	if target.Key() != a.DefinitionKey {
		return UpgradePlan{}, nil, fmt.Errorf("%w: %s is %q, the agent runs %q", ErrOtherDefinition, target.ID, target.Key(), a.DefinitionKey)
	}
	plan := diffDefinitions(a.PubKey, cur, target)
	plan.FilesAdded, plan.FilesRemoved, _ = d.fileChanges(ctx, a.PubKey, target)
	return plan, target, nil
}

// target resolves to, or the latest version of a's definition.
func (d *Daemon) target(ctx context.Context, a Agent, to string) (*events.Definition, error) {
	if to != "" {
		ref, err := ParseDefinitionRef(to)
		if err != nil {
			return nil, err
		}
		return d.resolveDefinition(ctx, ref)
	}
	latest, err := d.latestVersion(ctx, a.DefinitionKey)
	if err != nil {
		return nil, err
	}
	if latest == nil {
		return nil, fmt.Errorf("%w: no version of %s", ErrDefinitionNotFound, a.DefinitionKey)
	}
	return latest, nil
}

// latestVersion is the newest stored version with key (nil when none).
func (d *Daemon) latestVersion(ctx context.Context, key string) (*events.Definition, error) {
	versions, err := d.definitionVersions(ctx, key)
	if err != nil || len(versions) == 0 {
		return nil, err
	}
	return events.LatestDefinitions(versions)[0], nil
}

// diffDefinitions lists what changes from a to b.
func diffDefinitions(agent string, a, b *events.Definition) UpgradePlan {
	p := UpgradePlan{Agent: agent, From: summarize(a), To: summarize(b), UpToDate: a.ID == b.ID,
		Changes: []FieldChange{}, ToolsAdded: []string{}, ToolsRemoved: []string{}}
	fields := []struct{ name, from, to string }{
		{"title", a.Title, b.Title}, {"role", a.Role, b.Role}, {"instructions", a.Instructions, b.Instructions},
		{"use-criteria", a.UseCriteria, b.UseCriteria}, {"description", a.Description, b.Description},
		{"image", a.Image, b.Image}, {"version", a.Version, b.Version}, {"slug", a.Slug, b.Slug},
	}
	for _, f := range fields {
		if f.from != f.to {
			p.Changes = append(p.Changes, FieldChange{Field: f.name, From: f.from, To: f.to})
		}
	}
	for _, t := range b.Tools {
		if !slices.Contains(a.Tools, t) && !slices.Contains(p.ToolsAdded, t) {
			p.ToolsAdded = append(p.ToolsAdded, t)
		}
	}
	for _, t := range a.Tools {
		if !slices.Contains(b.Tools, t) && !slices.Contains(p.ToolsRemoved, t) {
			p.ToolsRemoved = append(p.ToolsRemoved, t)
		}
	}
	p.ContentChanged = a.Content != b.Content
	return p
}

// queueAutoUpgrades marks the agents that opted in for an upgrade check.
func (d *Daemon) queueAutoUpgrades(agents []Agent) {
	for _, a := range agents {
		if a.AutoUpgrade {
			d.live.queueUpgrade(a.PubKey)
		}
	}
	d.signal()
}

// applyAutoUpgrades upgrades every queued agent that still opts in to the
// latest version of its definition, if that is newer.
func (d *Daemon) applyAutoUpgrades(ctx context.Context) {
	for _, pk := range d.live.takeUpgrades() {
		if err := d.autoUpgrade(ctx, pk); err != nil && ctx.Err() == nil {
			d.log.Warn("automatic upgrade failed", "agent", pk, "err", err)
		}
	}
}

func (d *Daemon) autoUpgrade(ctx context.Context, pubkey string) error {
	a, err := d.Lookup(pubkey)
	if errors.Is(err, ErrUnknownAgent) {
		return nil // removed meanwhile
	}
	if err != nil || !a.AutoUpgrade {
		return err
	}
	latest, err := d.latestVersion(ctx, a.DefinitionKey)
	if err != nil || latest == nil || latest.ID == a.DefinitionID {
		return err
	}
	_, err = d.upgrade(ctx, a, latest.ID, true)
	return err
}
