package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentnode/agentnode/agentd"
)

const agentUpgradeUsage = `agent upgrade <agent> [--to REF] [--yes] [--auto on|off] [--node URL] [--json]

Shows what changes between the definition version the agent runs and the
latest stored version of the same definition (same author and slug, or
title), or --to a given version. Nothing changes without --yes. --auto
switches the agent's automatic-upgrade policy (opt-in per agent).`

// runAgentUpgrade: agent upgrade (see agentUpgradeUsage).
func runAgentUpgrade(ctx context.Context, m *Main, args []string) error {
	const cmd = "agent upgrade"
	var f agentFlags
	fs := m.newFlagSet(cmd, agentUpgradeUsage)
	m.addAgentFlags(fs, &f)
	to := fs.String("to", "", "the version to switch to (default: the latest)")
	yes := fs.Bool("yes", false, "apply the upgrade")
	auto := fs.String("auto", "", "on or off: the agent's automatic-upgrade policy")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(cmd, pos, 1, "one agent"); err != nil {
		return err
	}
	if *auto != "" && *auto != "on" && *auto != "off" {
		return usagef("%s: --auto %q: want on or off", cmd, *auto)
	}
	c, err := m.agentClient(cmd, &f, *yes || *auto != "")
	if err != nil {
		return err
	}
	if *auto != "" {
		a, err := c.SetAutoUpgrade(ctx, pos[0], *auto == "on")
		if err != nil {
			return agentErr(cmd, &f, err)
		}
		fmt.Fprintf(m.Stderr, "%s: automatic upgrades %s for %q\n", cmd, *auto, a.Name)
	}
	var plan agentd.UpgradePlan
	if *yes {
		plan, err = c.Upgrade(ctx, pos[0], *to)
	} else {
		plan, err = c.PlanUpgrade(ctx, pos[0], *to)
	}
	if err != nil {
		return agentErr(cmd, &f, err)
	}
	if f.json {
		return writeJSON(m.Stdout, plan)
	}
	m.printPlan(plan)
	return nil
}

func (m *Main) printPlan(p agentd.UpgradePlan) {
	if p.UpToDate {
		fmt.Fprintf(m.Stdout, "up to date: runs v%s %s\n", p.From.Version, p.From.ID)
		return
	}
	fmt.Fprintf(m.Stdout, "from v%s %s\nto   v%s %s\n\n", p.From.Version, p.From.ID, p.To.Version, p.To.ID)
	for _, c := range p.Changes {
		fmt.Fprintf(m.Stdout, "%s:\n  - %s\n  + %s\n", c.Field, oneLine(c.From, 200), oneLine(c.To, 200))
	}
	if len(p.ToolsAdded) > 0 {
		fmt.Fprintf(m.Stdout, "tools added: %s\n", strings.Join(p.ToolsAdded, ", "))
	}
	if len(p.ToolsRemoved) > 0 {
		fmt.Fprintf(m.Stdout, "tools removed: %s\n", strings.Join(p.ToolsRemoved, ", "))
	}
	if p.ContentChanged {
		fmt.Fprintln(m.Stdout, "content (markdown) changed")
	}
	if len(p.FilesAdded) > 0 {
		fmt.Fprintf(m.Stdout, "files added: %s\n", strings.Join(p.FilesAdded, ", "))
	}
	if len(p.FilesRemoved) > 0 {
		fmt.Fprintf(m.Stdout, "files removed: %s\n", strings.Join(p.FilesRemoved, ", "))
	}
	if p.Applied {
		fmt.Fprintln(m.Stdout, "\nupgraded: the agent now runs the new version (its kind 0 points at it).")
	} else {
		fmt.Fprintf(m.Stdout, "\nnot applied: run `agentnode agent upgrade %s --to %s --yes` to switch.\n", npub(p.Agent), p.To.ID)
	}
}
