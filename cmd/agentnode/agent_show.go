package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/lessons"
)

// runAgentList: agent list [--json].
func runAgentList(ctx context.Context, m *Main, args []string) error {
	const cmd = "agent list"
	var f agentFlags
	fs := m.newFlagSet(cmd, "agent list [--node URL] [--json]")
	m.addAgentFlags(fs, &f)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(cmd, pos, 0, "no arguments"); err != nil {
		return err
	}
	c, err := m.agentClient(cmd, &f, false)
	if err != nil {
		return err
	}
	list, err := c.List(ctx)
	if err != nil {
		return agentErr(cmd, &f, err)
	}
	if f.json {
		return writeJSON(m.Stdout, map[string]any{"agents": nonNil(list)})
	}
	t := newTable(m.Stdout)
	fmt.Fprintln(t, "NAME\tAGENT\tDEFINITION\tOWNER\tNUDGES\tAUTO-UPGRADE")
	for _, a := range list {
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%d\t%v\n", oneLine(a.Name, 30), npub(a.PubKey), a.DefinitionID[:12], shortNpub(a.Owner), len(a.Nudges), a.AutoUpgrade)
	}
	return t.Flush()
}

const agentShowUsage = `agent show <agent> [--effective [--nudge ID]...] [--node URL] [--json]

<agent> is the agent's npub, hex pubkey or name. --effective shows what the
agent runs with: the composed system prompt, its tool set and every lesson
seen for its definition, applied (with the trust rule that admitted it) or
refused (with the reason); --json prints {"prompt", "tools", "lessons"}.
--nudge adds a message's nudges (as ["nudge", <id>] tags would).`

// runAgentShow: agent show (see agentShowUsage).
func runAgentShow(ctx context.Context, m *Main, args []string) error {
	const cmd = "agent show"
	var f agentFlags
	var nudges stringList
	fs := m.newFlagSet(cmd, agentShowUsage)
	m.addAgentFlags(fs, &f)
	effective := fs.Bool("effective", false, "show the effective prompt, tools and lessons")
	fs.Var(&nudges, "nudge", "with --effective: a message nudge id, repeatable")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(cmd, pos, 1, "one agent"); err != nil {
		return err
	}
	if len(nudges) > 0 && !*effective {
		return usagef("%s: --nudge needs --effective", cmd)
	}
	c, err := m.agentClient(cmd, &f, false)
	if err != nil {
		return err
	}
	if *effective {
		eff, err := c.Effective(ctx, pos[0], nudges)
		if err != nil {
			return agentErr(cmd, &f, err)
		}
		if f.json {
			return writeJSON(m.Stdout, eff)
		}
		return m.printEffective(eff)
	}
	v, err := c.Show(ctx, pos[0])
	if err != nil {
		return agentErr(cmd, &f, err)
	}
	if f.json {
		return writeJSON(m.Stdout, v)
	}
	return m.printAgent(v)
}

func (m *Main) printAgent(v agentd.AgentView) error {
	t := newTable(m.Stdout)
	row := func(name, value string) {
		if value != "" {
			fmt.Fprintf(t, "%s\t%s\n", name, value)
		}
	}
	row("name", v.Name)
	row("agent", v.Npub)
	row("pubkey", v.PubKey)
	row("owner", npub(v.Owner))
	row("verified", verifiedText(v))
	row("definition", fmt.Sprintf("%s v%s %s", v.Definition.Title, v.Definition.Version, v.Definition.ID))
	if v.Latest != nil {
		row("newer version", fmt.Sprintf("v%s %s (agentnode agent upgrade %s)", v.Latest.Version, v.Latest.ID, v.Npub))
	}
	row("installed", v.InstalledAt.Format("2006-01-02 15:04:05 UTC"))
	if !v.UpgradedAt.IsZero() {
		row("upgraded", v.UpgradedAt.Format("2006-01-02 15:04:05 UTC"))
	}
	row("auto-upgrade", fmt.Sprint(v.AutoUpgrade))
	row("key", map[bool]string{true: "NIP-49 encrypted", false: "plain (no passphrase configured)"}[v.KeyEncrypted])
	row("state open", openText(v.StateOpen))
	for _, n := range v.Nudges {
		row("nudge", n)
	}
	for _, n := range v.MissingNudges {
		row("missing nudge", n+" (not on the relay; skipped)")
	}
	for _, f := range v.Files {
		row("file", fmt.Sprintf("%s (%d bytes, sha256 %s)", f.Path, f.Size, f.SHA256))
	}
	for _, s := range v.Skills {
		row("skill", fmt.Sprintf("%s (%s by %s, license %s, %d files, trusted %v)", s.Title, s.ID, npub(s.Author), orDash(s.License), len(s.Files), s.Trusted))
	}
	for _, s := range v.MCPServers {
		row("mcp server", fmt.Sprintf("%s %s: %q by %s (trusted %v, event %s)", s.Slug, strings.ToUpper(s.State), s.Command, npub(s.Author), s.AuthorTrusted, s.EventID))
	}
	return t.Flush()
}

func verifiedText(v agentd.AgentView) string {
	if v.Ownership.Verified {
		return "yes"
	}
	return "no: " + v.Ownership.Reason
}

func (m *Main) printEffective(eff lessons.Effective) error {
	fmt.Fprintf(m.Stdout, "tools: %s\n\n", orDash(strings.Join(eff.Tools, ", ")))
	fmt.Fprintf(m.Stdout, "%s\n", strings.TrimRight(eff.Prompt, "\n"))
	if len(eff.Lessons) == 0 {
		return nil
	}
	fmt.Fprintln(m.Stdout)
	t := newTable(m.Stdout)
	fmt.Fprintln(t, "LESSON\tAUTHOR\tAPPLIED\tRULE OR REASON\tTITLE")
	for _, l := range eff.Lessons {
		why := l.Rule
		if !l.Applied {
			why = l.Reason
		}
		fmt.Fprintf(t, "%s\t%s\t%v\t%s\t%s\n", l.ID[:12], shortNpub(l.Author), l.Applied, why, oneLine(l.Title, 40))
	}
	return t.Flush()
}
