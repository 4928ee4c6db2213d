package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/agentnode/agentnode/agentd"
)

const agentCapInstallUsage = `agent cap install <agent> <cap | ./file.acp.yaml> [--author NPUB] [--node URL] [--data DIR] [--json]

<cap> is did:nuwa:cap:<name>[@<semver>], <name>[@<semver>] or a kind-30199
naddr, resolved on the node's relay (no version: the latest). A path to a
local .acp.yaml installs that file: it must be signed (agentnode cap sign)
and unchanged since; unsigned or tampered files are refused with the reason.
The package is checked, its schema registered with the state store, and the
file cached under <data>/agents/<agent>/caps/.`

// runAgentCapInstall: agent cap install (see agentCapInstallUsage).
func runAgentCapInstall(ctx context.Context, m *Main, args []string) error {
	const cmd = "agent cap install"
	var f agentFlags
	var req agentd.CapInstallRequest
	fs := m.newFlagSet(cmd, agentCapInstallUsage)
	m.addAgentFlags(fs, &f)
	fs.StringVar(&req.Author, "author", "", "only packages by this author (npub or hex)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(cmd, pos, 2, "an agent and a capability (or a file)"); err != nil {
		return err
	}
	if req.YAML, err = localPackage(pos[1]); err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	if req.YAML == "" {
		req.Ref = pos[1]
	}
	c, err := m.agentClient(cmd, &f, true)
	if err != nil {
		return err
	}
	ch, err := c.InstallCap(ctx, pos[0], req)
	if err != nil {
		return agentErr(cmd, &f, err)
	}
	return m.printCapChange(ch, &f, "installed")
}

const agentCapUpgradeUsage = `agent cap upgrade <agent> <cap> [--to VERSION|REF] [--file F] [--accept-permissions]
    [--node URL] [--data DIR] [--json]

Moves the installed capability <cap> (name, name@version or id) to the
latest version its author published on the relay, or --to a version
(1.2.0, name@1.2.0, a cap URI or naddr), or --file a signed local file.
A version that asks for permissions the installed one did not have is
refused unless --accept-permissions; added and removed permissions are
printed either way.`

// runAgentCapUpgrade: agent cap upgrade (see agentCapUpgradeUsage).
func runAgentCapUpgrade(ctx context.Context, m *Main, args []string) error {
	const cmd = "agent cap upgrade"
	var f agentFlags
	var req agentd.CapUpgradeRequest
	fs := m.newFlagSet(cmd, agentCapUpgradeUsage)
	m.addAgentFlags(fs, &f)
	fs.StringVar(&req.To, "to", "", "the version or reference to move to (default: the latest by the same author)")
	file := fs.String("file", "", "a signed local .acp.yaml to move to")
	fs.BoolVar(&req.AcceptPermissions, "accept-permissions", false, "accept permissions the new version adds")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(cmd, pos, 2, "an agent and an installed capability"); err != nil {
		return err
	}
	if *file != "" {
		if req.To != "" {
			return usagef("%s: give --to or --file, not both", cmd)
		}
		b, err := os.ReadFile(*file)
		if err != nil {
			return fmt.Errorf("%s: %w", cmd, err)
		}
		req.YAML = string(b)
	}
	c, err := m.agentClient(cmd, &f, true)
	if err != nil {
		return err
	}
	ch, err := c.UpgradeCap(ctx, pos[0], pos[1], req)
	if err != nil {
		return agentErr(cmd, &f, err)
	}
	return m.printCapChange(ch, &f, "upgraded")
}

// runAgentCapRemove: agent cap remove <agent> <cap>.
func runAgentCapRemove(ctx context.Context, m *Main, args []string) error {
	const cmd = "agent cap remove"
	var f agentFlags
	fs := m.newFlagSet(cmd, "agent cap remove <agent> <cap> [--node URL] [--data DIR] [--json]\n\nUninstalls the capability; the state it wrote stays in the store.")
	m.addAgentFlags(fs, &f)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(cmd, pos, 2, "an agent and an installed capability"); err != nil {
		return err
	}
	c, err := m.agentClient(cmd, &f, true)
	if err != nil {
		return err
	}
	ch, err := c.RemoveCap(ctx, pos[0], pos[1])
	if err != nil {
		return agentErr(cmd, &f, err)
	}
	return m.printCapChange(ch, &f, "removed")
}

// runAgentCapList: agent cap list <agent>.
func runAgentCapList(ctx context.Context, m *Main, args []string) error {
	const cmd = "agent cap list"
	var f agentFlags
	fs := m.newFlagSet(cmd, "agent cap list <agent> [--node URL] [--json]")
	m.addAgentFlags(fs, &f)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(cmd, pos, 1, "one agent"); err != nil {
		return err
	}
	c, err := m.agentClient(cmd, &f, false)
	if err != nil {
		return err
	}
	caps, err := c.Caps(ctx, pos[0])
	if err != nil {
		return agentErr(cmd, &f, err)
	}
	return printList(m.Stdout, caps, f.json, func(c agentd.InstalledCap) agentd.InstalledCap { return c },
		"no capabilities installed", "CAPABILITY\tAUTHOR\tSCOPE\tPERMISSIONS\tINSTALLED",
		func(c agentd.InstalledCap) string {
			return fmt.Sprintf("%s\t%s\t%s\t%s\t%s", c.ID, shortNpub(c.Author), c.MemoryScope,
				strings.Join(c.Permissions, ","), c.InstalledAt.Format("2006-01-02 15:04"))
		})
}

// localPackage reads arg when it names a local file (a path, or a name
// ending in .yaml/.yml that exists); "" when arg is a reference.
func localPackage(arg string) (string, error) {
	looksLikePath := strings.ContainsAny(arg, `/\`) || strings.HasSuffix(arg, ".yaml") || strings.HasSuffix(arg, ".yml")
	if !looksLikePath || strings.HasPrefix(arg, "did:") {
		return "", nil
	}
	b, err := os.ReadFile(arg)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

func (m *Main) printCapChange(ch agentd.CapChange, f *agentFlags, verb string) error {
	if f.json {
		return writeJSON(m.Stdout, ch)
	}
	if !ch.Changed {
		fmt.Fprintf(m.Stdout, "%s: %s (nothing changed)\n", ch.Note, ch.Cap.ID)
		return nil
	}
	if ch.Previous != nil {
		fmt.Fprintf(m.Stdout, "%s %s -> %s\n", verb, ch.Previous.ID, ch.Cap.ID)
	} else {
		fmt.Fprintf(m.Stdout, "%s %s\n", verb, ch.Cap.ID)
	}
	fmt.Fprintf(m.Stdout, "  author       %s\n", npub(ch.Cap.Author))
	if ch.Cap.EventID != "" {
		fmt.Fprintf(m.Stdout, "  event        %s\n", ch.Cap.EventID)
	}
	fmt.Fprintf(m.Stdout, "  memory scope %s\n  permissions  %s\n", ch.Cap.MemoryScope, strings.Join(ch.Cap.Permissions, ", "))
	if len(ch.PermissionsAdded) > 0 {
		fmt.Fprintf(m.Stdout, "  permissions added:   %s\n", strings.Join(ch.PermissionsAdded, ", "))
	}
	if len(ch.PermissionsRemoved) > 0 {
		fmt.Fprintf(m.Stdout, "  permissions removed: %s\n", strings.Join(ch.PermissionsRemoved, ", "))
	}
	if ch.Note != "" {
		fmt.Fprintf(m.Stdout, "  note: %s\n", ch.Note)
	}
	return nil
}
