package main

import (
	"context"
	"fmt"
	"strings"
)

// runAgentNudge: agent nudge add|remove <agent> <nudge ref>.
func runAgentNudge(ctx context.Context, m *Main, op string, args []string) error {
	cmd := "agent nudge " + op
	var f agentFlags
	fs := m.newFlagSet(cmd, cmd+" <agent> <nudge nevent|note|hex> [--node URL] [--json]")
	m.addAgentFlags(fs, &f)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(cmd, pos, 2, "an agent and a nudge"); err != nil {
		return err
	}
	c, err := m.agentClient(cmd, &f, true)
	if err != nil {
		return err
	}
	edit := c.AddNudge
	if op == "remove" {
		edit = c.RemoveNudge
	}
	change, err := edit(ctx, pos[0], pos[1])
	if err != nil {
		return agentErr(cmd, &f, err)
	}
	if f.json {
		return writeJSON(m.Stdout, change)
	}
	state := map[bool]string{true: "done", false: "nothing to change"}[change.Changed]
	fmt.Fprintf(m.Stdout, "%s: %s; %q has %d nudge(s)\n", cmd, state, change.Agent.Name, len(change.Agent.Nudges))
	for _, n := range change.Agent.Nudges {
		fmt.Fprintf(m.Stdout, "  %s\n", n)
	}
	return nil
}

const agentLearnUsage = `agent learn <agent> --title T [--category C] (--content TEXT | --content-file F)
    [--node URL] [--data DIR] [--json]

The agent publishes the lesson (kind 4129) signed with its own key,
referencing the definition version it runs, as its lesson.learn tool does.`

// runAgentLearn: agent learn (see agentLearnUsage).
func runAgentLearn(ctx context.Context, m *Main, args []string) error {
	const cmd = "agent learn"
	var f agentFlags
	var content contentFlags
	fs := m.newFlagSet(cmd, agentLearnUsage)
	m.addAgentFlags(fs, &f)
	title := fs.String("title", "", "short summary (required)")
	category := fs.String("category", "", "topic classification")
	addContentFlags(fs, &content, "the lesson")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(cmd, pos, 1, "one agent"); err != nil {
		return err
	}
	text, err := content.read(m, cmd)
	if err != nil {
		return err
	}
	if *title == "" || strings.TrimSpace(text) == "" {
		return usagef("%s: --title and --content (or --content-file) are required", cmd)
	}
	c, err := m.agentClient(cmd, &f, true)
	if err != nil {
		return err
	}
	evt, err := c.Learn(ctx, pos[0], *title, *category, text)
	if err != nil {
		return agentErr(cmd, &f, err)
	}
	if f.json {
		return writeJSON(m.Stdout, evt)
	}
	fmt.Fprintf(m.Stdout, "published kind %d event %s\n  %s\n  signed by the agent %s\n", evt.Kind, evt.ID, pointer(evt, nil), npub(evt.PubKey))
	return nil
}

// runAgentRemove: agent remove <agent> [--retract].
func runAgentRemove(ctx context.Context, m *Main, args []string) error {
	const cmd = "agent remove"
	var f agentFlags
	fs := m.newFlagSet(cmd, `agent remove <agent> --yes [--retract] [--node URL] [--data DIR] [--json]

Uninstalls the agent: its registry entry and key file are deleted, so
nothing can sign for it again — nor update or retract what it published
later. What it published stays, unless --retract: then the agent first
signs deletions (kind 5) of its profile, lessons and comments. To keep the
key, copy it out of <data>/agents/ first. --yes confirms.`)
	m.addAgentFlags(fs, &f)
	retract := fs.Bool("retract", false, "delete the agent's profile, lessons and comments first (kind 5)")
	yes := fs.Bool("yes", false, "confirm: the agent's secret key is deleted for good")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(cmd, pos, 1, "one agent"); err != nil {
		return err
	}
	if !*yes {
		return usagef("%s: this deletes %s's secret key for good (nothing can sign for it again, nor retract what it published later; --retract does that now); copy the key out of <data>/agents/ first if you may need it, then run again with --yes", cmd, pos[0])
	}
	c, err := m.agentClient(cmd, &f, true)
	if err != nil {
		return err
	}
	res, err := c.Remove(ctx, pos[0], *retract)
	if err != nil {
		return agentErr(cmd, &f, err)
	}
	if f.json {
		return writeJSON(m.Stdout, res)
	}
	fmt.Fprintf(m.Stdout, "removed agent %q %s (key deleted", res.Agent.Name, res.Npub)
	if len(res.Retractions) > 0 {
		fmt.Fprintf(m.Stdout, "; %d deletion request(s) published", len(res.Retractions))
	}
	fmt.Fprintf(m.Stdout, ")\nThe owner may stop claiming it:\n\n  AGENTNODE_OWNER_KEY=<owner nsec> %s\n", res.ClaimCommand)
	return nil
}
