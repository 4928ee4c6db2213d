package main

import (
	"context"

	"github.com/agentnode/agentnode/events"
)

const nudgePublishUsage = `nudge publish [--title T] [--only-tool NAME]... [--allow-tool NAME]... [--deny-tool NAME]...
    [--content TEXT | --content-file F] [--key NSEC] [--relay URL]... [--json]

A nudge needs a title or content. Any --only-tool fixes the tool set and
makes --allow-tool/--deny-tool moot.`

// runNudgePublish: nudge publish (see nudgePublishUsage).
func runNudgePublish(ctx context.Context, m *Main, args []string) error {
	var w writeFlags
	var n events.Nudge
	var only, allow, deny stringList
	var content contentFlags
	fs := m.newFlagSet("nudge publish", nudgePublishUsage)
	m.addWriteFlags(fs, &w)
	fs.StringVar(&n.Title, "title", "", "short identifier")
	fs.Var(&only, "only-tool", "the agent gets exactly these tools, repeatable")
	fs.Var(&allow, "allow-tool", "add a tool to the default set, repeatable")
	fs.Var(&deny, "deny-tool", "remove a tool from the default set, repeatable")
	addContentFlags(fs, &content, "the behavioural modifier")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("nudge publish: unexpected argument %q", fs.Arg(0))
	}
	var err error
	if n.Content, err = content.read(m, "nudge publish"); err != nil {
		return err
	}
	if n.Title == "" && n.Content == "" {
		return usagef("nudge publish: give a --title or --content")
	}
	n.OnlyTools, n.AllowTools, n.DenyTools = only, allow, deny
	return m.signAndPublish(ctx, "nudge publish", &w, n.Template())
}
