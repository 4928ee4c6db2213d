package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/consent"
)

// consentClient returns a client of the node's consent API; every call
// carries the API token.
func (m *Main) consentClient(cmd string, f *agentFlags) (*consent.Client, error) {
	ac, err := m.agentClient(cmd, f, true)
	if err != nil {
		return nil, err
	}
	return &consent.Client{BaseURL: ac.BaseURL, Token: ac.Token, HTTP: &http.Client{Timeout: f.timeout}}, nil
}

// consentArgs parses the common flags and wants n positional arguments.
func (m *Main) consentArgs(cmd, usage string, n int, what string, args []string, extra func(*flag.FlagSet)) (*consent.Client, *agentFlags, []string, error) {
	var f agentFlags
	fs := m.newFlagSet(cmd, usage)
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
	c, err := m.consentClient(cmd, &f)
	return c, &f, pos, err
}

// runConsentList: consent list [--status S] [--json].
func runConsentList(ctx context.Context, m *Main, args []string) error {
	const cmd = "consent list"
	var status string
	c, f, _, err := m.consentArgs(cmd, "consent list [--status pending|approved|denied] [--node URL] [--data DIR] [--json]", 0, "no arguments", args,
		func(fs *flag.FlagSet) { fs.StringVar(&status, "status", "", "only approvals with this status") })
	if err != nil {
		return err
	}
	ov, err := c.Overview(ctx, consent.Status(status))
	if err != nil {
		return consentErr(cmd, f, err)
	}
	if f.json {
		return writeJSON(m.Stdout, ov)
	}
	return printOverview(m, ov)
}

func printOverview(m *Main, ov consent.Overview) error {
	fmt.Fprintf(m.Stdout, "policy: approval needed for %s\n", orDash(strings.Join(ov.Policy.Require, ", ")))
	t := newTable(m.Stdout)
	fmt.Fprintln(t, "APPROVAL\tSTATUS\tOPERATION\tAGENT\tTARGET\tSUMMARY")
	for _, a := range ov.Approvals {
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.Status, a.Op, shortNpub(a.Agent), shortTarget(a.Target), oneLine(a.Summary, 50))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	for _, r := range ov.Revoked {
		fmt.Fprintf(m.Stdout, "revoked: %s %s\n", npub(r.Agent), r.Reason)
	}
	return nil
}

// shortTarget shortens an agent target; resource targets stay as they are.
func shortTarget(s string) string {
	if len(s) == 64 {
		return shortNpub(s)
	}
	return orDash(s)
}

// runConsentApprove: consent approve <id>.
func runConsentApprove(ctx context.Context, m *Main, args []string) error {
	const cmd = "consent approve"
	c, f, pos, err := m.consentArgs(cmd, "consent approve <approval-id> [--node URL] [--data DIR] [--json]", 1, "one approval id", args, nil)
	if err != nil {
		return err
	}
	a, err := c.Approve(ctx, pos[0])
	return m.printApproval(cmd, f, a, err)
}

// runConsentDeny: consent deny <id> [--reason TEXT].
func runConsentDeny(ctx context.Context, m *Main, args []string) error {
	const cmd = "consent deny"
	var reason string
	c, f, pos, err := m.consentArgs(cmd, "consent deny <approval-id> [--reason TEXT] [--node URL] [--data DIR] [--json]", 1, "one approval id", args,
		func(fs *flag.FlagSet) { fs.StringVar(&reason, "reason", "", "why (shown to the agent's task)") })
	if err != nil {
		return err
	}
	a, err := c.Deny(ctx, pos[0], reason)
	return m.printApproval(cmd, f, a, err)
}

func (m *Main) printApproval(cmd string, f *agentFlags, a consent.Approval, err error) error {
	if err != nil {
		return consentErr(cmd, f, err)
	}
	if f.json {
		return writeJSON(m.Stdout, a)
	}
	fmt.Fprintf(m.Stdout, "%s %s: %s %s\n", a.Status, a.ID, a.Op, shortTarget(a.Target))
	return nil
}

// runConsentRevoke: consent revoke <agent> [--reason TEXT].
func runConsentRevoke(ctx context.Context, m *Main, args []string) error {
	const cmd = "consent revoke"
	var reason string
	c, f, pos, err := m.consentArgs(cmd, "consent revoke <agent> [--reason TEXT] [--node URL] [--data DIR] [--json]\n\n<agent> is an npub, a hex pubkey or the name of an agent on the node.", 1, "one agent", args,
		func(fs *flag.FlagSet) { fs.StringVar(&reason, "reason", "", "why") })
	if err != nil {
		return err
	}
	pk, err := m.resolveAgent(ctx, cmd, f, pos[0])
	if err != nil {
		return err
	}
	r, err := c.Revoke(ctx, pk, reason)
	if err != nil {
		return consentErr(cmd, f, err)
	}
	if f.json {
		return writeJSON(m.Stdout, r)
	}
	fmt.Fprintf(m.Stdout, "revoked %s: it answers nothing until `agentnode consent unrevoke`\n", npub(r.Agent))
	return nil
}

// runConsentUnrevoke: consent unrevoke <agent>.
func runConsentUnrevoke(ctx context.Context, m *Main, args []string) error {
	const cmd = "consent unrevoke"
	c, f, pos, err := m.consentArgs(cmd, "consent unrevoke <agent> [--node URL] [--data DIR] [--json]", 1, "one agent", args, nil)
	if err != nil {
		return err
	}
	pk, err := m.resolveAgent(ctx, cmd, f, pos[0])
	if err != nil {
		return err
	}
	was, err := c.Unrevoke(ctx, pk)
	if err != nil {
		return consentErr(cmd, f, err)
	}
	if f.json {
		return writeJSON(m.Stdout, map[string]any{"agent": pk, "revoked": was})
	}
	if !was {
		fmt.Fprintf(m.Stdout, "%s was not revoked\n", npub(pk))
		return nil
	}
	fmt.Fprintf(m.Stdout, "unrevoked %s\n", npub(pk))
	return nil
}

// resolveAgent turns an npub or hex pubkey into hex; anything else is taken
// as the name of an agent on the node and looked up through its agent API.
func (m *Main) resolveAgent(ctx context.Context, cmd string, f *agentFlags, s string) (string, error) {
	if pk, err := consent.AgentID(s); err == nil {
		return pk, nil
	}
	ac, err := m.agentClient(cmd, f, false)
	if err != nil {
		return "", err
	}
	v, err := ac.Show(ctx, s)
	if err != nil {
		if errors.Is(err, agentd.ErrUnknownAgent) {
			return "", usagef("%s: %q is not an npub, a hex pubkey or the name of an agent on the node", cmd, s)
		}
		return "", agentErr(cmd, f, err)
	}
	return v.PubKey, nil
}

// consentErr adds the command name, and a hint when the node is not there.
func consentErr(cmd string, f *agentFlags, err error) error {
	var api *consent.APIError
	if errors.As(err, &api) {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w (is `agentnode serve` running at %s? see --node)", cmd, err, f.node)
	}
	return fmt.Errorf("%s: %w", cmd, err)
}
