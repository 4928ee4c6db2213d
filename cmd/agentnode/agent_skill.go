package main

import (
	"context"
	"fmt"

	"github.com/agentnode/agentnode/agentd"
)

const agentSkillAddUsage = `agent skill add <agent> <skill nevent|note|hex> [--accept] [--node URL] [--data DIR] [--json]

The skill (kind 4202) must be on the node's relay. Its files (kind-1063
references) are fetched and verified into <data>/agents/<agent>/skills/<id>/
and its instructions close the agent's effective prompt, headed by their
provenance. A skill whose author the agent does not trust (not the agent,
its owner, its definition's author or the trust allowlist) is shown and
refused unless --accept is given.`

// runAgentSkillAdd: agent skill add (see agentSkillAddUsage).
func runAgentSkillAdd(ctx context.Context, m *Main, args []string) error {
	const cmd = "agent skill add"
	var f agentFlags
	var req agentd.SkillInstallRequest
	fs := m.newFlagSet(cmd, agentSkillAddUsage)
	m.addAgentFlags(fs, &f)
	fs.BoolVar(&req.Accept, "accept", false, "install although the skill's author is not trusted by the agent")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(cmd, pos, 2, "an agent and a skill"); err != nil {
		return err
	}
	req.Skill = pos[1]
	c, err := m.agentClient(cmd, &f, true)
	if err != nil {
		return err
	}
	res, err := c.InstallSkill(ctx, pos[0], req)
	if err != nil {
		return agentErr(cmd, &f, err)
	}
	if f.json {
		return writeJSON(m.Stdout, res)
	}
	fmt.Fprintf(m.Stdout, "skill %q (%s) on %s, license %s, %d files\n", res.Title, res.ID, pos[0], orDash(res.License), len(res.Files))
	return nil
}
