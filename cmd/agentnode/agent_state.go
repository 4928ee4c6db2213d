package main

import (
	"context"
	"fmt"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/state"
)

const agentStateUsage = `agent state open|close <agent> <schema-uri> read|write [--node URL] [--data DIR] [--json]

By default an agent's state is reached by the agent itself and its owner
only: anyone else who gets the agent to make a state call (a stranger over
kind 25910, a DM correspondent, another agent, the model loop answering
them) reads public documents and nothing else, and writes nothing. The
owner opens one schema at a time:

  read   others read the agent's documents of the schema (not each other's)
  write  others create documents of the schema, attributed to each of them:
         each reads and edits its own; the owner reads them all

agent show lists what is open.`

// runAgentState: agent state open|close (see agentStateUsage).
func runAgentState(ctx context.Context, m *Main, open bool, args []string) error {
	cmd := "agent state close"
	if open {
		cmd = "agent state open"
	}
	var f agentFlags
	fs := m.newFlagSet(cmd, agentStateUsage)
	m.addAgentFlags(fs, &f)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(cmd, pos, 3, "an agent, a schema URI and read or write"); err != nil {
		return err
	}
	if pos[2] != agentd.AccessRead && pos[2] != agentd.AccessWrite {
		return usagef("%s: %q: want read or write", cmd, pos[2])
	}
	c, err := m.agentClient(cmd, &f, true)
	if err != nil {
		return err
	}
	a, err := c.SetStateAccess(ctx, pos[0], agentd.StateAccessRequest{Schema: pos[1], Access: pos[2], Open: open})
	if err != nil {
		return agentErr(cmd, &f, err)
	}
	if f.json {
		return writeJSON(m.Stdout, a)
	}
	fmt.Fprintf(m.Stdout, "%q: state open to others: %s\n", a.Name, openText(a.StateOpen))
	return nil
}

// openText says what a list of grants opens, "nothing" for none.
func openText(grants []state.Grant) string {
	if len(grants) == 0 {
		return "nothing (private state is the agent's and its owner's only)"
	}
	s := ""
	for i, g := range grants {
		if i > 0 {
			s += "; "
		}
		s += g.Schema + " " + grantText(g)
	}
	return s
}

func grantText(g state.Grant) string {
	switch {
	case g.Read && g.Write:
		return "read, write"
	case g.Write:
		return "write"
	}
	return "read"
}
