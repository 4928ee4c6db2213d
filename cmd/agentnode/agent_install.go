package main

import (
	"context"
	"fmt"

	"github.com/agentnode/agentnode/agentd"
)

const agentInstallUsage = `agent install <definition> --owner <npub> [--name NAME] [--auto-upgrade]
    [--node URL] [--data DIR] [--json]
agent install --team <naddr|nevent> --owner <npub> [--auto-upgrade] [--node URL] [--data DIR] [--json]

<definition> is an nevent, note, hex id, kind-4199 naddr, or npub:slug for
its latest version; it must be on the node's relay. The node makes a new
keypair for the agent (kept in <data>/agents, 0600) and publishes the
agent's kind 0: ["bot"], ["e", <definition>], ["p", <owner>]. Installing
the same definition for the same owner under the same name again returns
the existing agent. The owner confirms the agent with their own key:
the command to run is printed.`

// runAgentInstall: agent install (see agentInstallUsage).
func runAgentInstall(ctx context.Context, m *Main, args []string) error {
	const cmd = "agent install"
	var f agentFlags
	var req agentd.InstallRequest
	fs := m.newFlagSet(cmd, agentInstallUsage)
	m.addAgentFlags(fs, &f)
	fs.StringVar(&req.Owner, "owner", "", "the agent's owner, npub or hex (required)")
	fs.StringVar(&req.Name, "name", "", "the agent's name (default: the definition's title)")
	fs.BoolVar(&req.AutoUpgrade, "auto-upgrade", false, "switch to newer versions of the definition automatically")
	team := fs.String("team", "", "install every member of this team (kind 34199 naddr or nevent) instead; the first is the default agent")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if *team != "" {
		return m.runTeamInstall(ctx, &f, pos, *team, req)
	}
	if err := wantArgs(cmd, pos, 1, "one definition reference"); err != nil {
		return err
	}
	if req.Owner == "" {
		return usagef("%s: --owner is required", cmd)
	}
	req.Definition = pos[0]
	c, err := m.agentClient(cmd, &f, true)
	if err != nil {
		return err
	}
	res, err := c.Install(ctx, req)
	if err != nil {
		return agentErr(cmd, &f, err)
	}
	if f.json {
		return writeJSON(m.Stdout, res)
	}
	m.printInstalled(res, &f)
	return nil
}

func (m *Main) printInstalled(res agentd.Installed, f *agentFlags) {
	verb := "installed"
	if !res.Created {
		verb = "already installed"
	}
	a := res.Agent
	fmt.Fprintf(m.Stdout, "%s agent %q %s\n", verb, a.Name, res.Npub)
	fmt.Fprintf(m.Stdout, "  definition %s\n  owner      %s\n", a.DefinitionID, npub(a.Owner))
	claim := res.ClaimCommand
	if f.node != DefaultNode {
		claim += " --relay " + relayFor(f.node)
	}
	fmt.Fprintf(m.Stdout, "\nThe owner confirms the agent by signing their claims (kind 14199) with\ntheir own key, which this node never holds:\n\n  AGENTNODE_OWNER_KEY=<owner nsec> %s\n", claim)
}
