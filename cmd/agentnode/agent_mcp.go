package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/agentnode/agentnode/agentd"
)

const agentMCPUsage = `agent mcp add <agent> <server nevent|note|hex> [--node URL] [--data DIR] [--json]
agent mcp list <agent> [--json]
agent mcp approve <agent> <server> --event ID [--accept-untrusted] [--json]
agent mcp deny <agent> <server> --event ID [--json]

A kind-4200 MCP server runs a command on this machine, so it runs only when
the agent's owner approves that exact event: add records it pending and
shows the command, arguments, environment names, author and whether the
agent trusts that author; approve --event <the id shown> allows it (an
author the agent does not trust also needs --accept-untrusted); a new event
of the same server is pending again. An approved server runs sandboxed in
<data>/agents/<agent>/mcp/<server>/ and its tools are the agent's
capability mcp:<server>. See docs/MCP_SERVERS.md.`

// runAgentMCPAdd: agent mcp add (see agentMCPUsage).
func runAgentMCPAdd(ctx context.Context, m *Main, args []string) error {
	const cmd = "agent mcp add"
	c, f, pos, err := m.agentMCPArgs(cmd, 2, "an agent and a server", args, nil)
	if err != nil {
		return err
	}
	res, err := c.AddMCPServer(ctx, pos[0], agentd.MCPServerRequest{Server: pos[1]})
	if err != nil {
		return agentErr(cmd, f, err)
	}
	if f.json {
		return writeJSON(m.Stdout, res)
	}
	printMCPServer(m.Stdout, res)
	fmt.Fprintf(m.Stdout, "nothing runs until the owner approves: agentnode agent mcp approve %s %s --event %s%s\n",
		pos[0], res.Slug, res.EventID, untrustedFlag(res))
	return nil
}

// runAgentMCPList: agent mcp list (see agentMCPUsage).
func runAgentMCPList(ctx context.Context, m *Main, args []string) error {
	const cmd = "agent mcp list"
	c, f, pos, err := m.agentMCPArgs(cmd, 1, "an agent", args, nil)
	if err != nil {
		return err
	}
	list, err := c.MCPServers(ctx, pos[0])
	if err != nil {
		return agentErr(cmd, f, err)
	}
	if f.json {
		return writeJSON(m.Stdout, list)
	}
	if len(list) == 0 {
		fmt.Fprintln(m.Stdout, "no MCP servers")
	}
	for _, s := range list {
		printMCPServer(m.Stdout, s)
	}
	return nil
}

// runAgentMCPDecide: agent mcp approve|deny (see agentMCPUsage).
func runAgentMCPDecide(ctx context.Context, m *Main, approve bool, args []string) error {
	cmd := "agent mcp deny"
	if approve {
		cmd = "agent mcp approve"
	}
	dec := agentd.MCPDecision{Approve: approve}
	c, f, pos, err := m.agentMCPArgs(cmd, 2, "an agent and a server", args, func(fs *flag.FlagSet) {
		fs.StringVar(&dec.Event, "event", "", "the server's event id as listed (the decision binds to it)")
		if approve {
			fs.BoolVar(&dec.AcceptUntrusted, "accept-untrusted", false, "approve although the agent does not trust the server's author")
		}
	})
	if err != nil {
		return err
	}
	if dec.Event == "" {
		return usagef("%s: --event ID is required: the decision binds to the event shown by `agent mcp list`", cmd)
	}
	res, err := c.DecideMCPServer(ctx, pos[0], pos[1], dec)
	if err != nil {
		return agentErr(cmd, f, err)
	}
	if f.json {
		return writeJSON(m.Stdout, res)
	}
	printMCPServer(m.Stdout, res)
	return nil
}

// agentMCPArgs parses the common flags and wants n positional arguments.
func (m *Main) agentMCPArgs(cmd string, n int, what string, args []string, extra func(*flag.FlagSet)) (*agentd.Client, *agentFlags, []string, error) {
	var f agentFlags
	fs := m.newFlagSet(cmd, agentMCPUsage)
	m.addAgentFlags(fs, &f)
	if extra != nil {
		extra(fs)
	}
	pos, err := parseArgs(fs, args)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := wantArgs(cmd, pos, n, what); err != nil {
		return nil, nil, nil, err
	}
	c, err := m.agentClient(cmd, &f, true)
	return c, &f, pos, err
}

// printMCPServer shows what approving s would run.
func printMCPServer(w io.Writer, s agentd.MCPServer) {
	trust := "trusted author"
	if !s.AuthorTrusted {
		trust = "author NOT trusted by the agent"
	}
	fmt.Fprintf(w, "%s (%s) %s\n  event    %s\n  author   %s (%s)\n  command  %q\n", s.Slug, s.Name, strings.ToUpper(s.State), s.EventID, s.Author, trust, s.Command)
	if names := s.EnvNames(); len(names) > 0 {
		fmt.Fprintf(w, "  env      %s\n", strings.Join(names, " "))
	}
	fmt.Fprintf(w, "  dir      %s\n  tools    capability mcp:%s\n", s.Dir, s.Slug)
}

func untrustedFlag(s agentd.MCPServer) string {
	if s.AuthorTrusted {
		return ""
	}
	return " --accept-untrusted"
}

// runAgentMCPApprove is `agent mcp approve`.
func runAgentMCPApprove(ctx context.Context, m *Main, args []string) error {
	return runAgentMCPDecide(ctx, m, true, args)
}

// runAgentMCPDeny is `agent mcp deny`.
func runAgentMCPDeny(ctx context.Context, m *Main, args []string) error {
	return runAgentMCPDecide(ctx, m, false, args)
}
