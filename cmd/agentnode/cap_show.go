package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/agentnode/agentnode/capabilities/registry"
)

// capShowView is cap show's JSON: the summary plus the package file.
type capShowView struct {
	capabilityView
	SchemaURI string `json:"schema_uri"`
	Prompt    string `json:"prompt"`
	Content   string `json:"content"` // the .acp.yaml file, byte for byte
}

const capShowUsage = "cap show <cap-uri|name[@version]|naddr> [--author NPUB] [--relay URL]... [--json]"

// runCapShow: cap show (see capShowUsage). Resolves one package version:
// no version means the latest by semver; two authors of one name are
// settled by docs/REGISTRY.md's rule and the others listed (the CLI has
// no memory of which it saw first: without --author that is ambiguous).
func runCapShow(ctx context.Context, m *Main, args []string) error {
	var nf netFlags
	var author string
	var asJSON bool
	fs := m.newFlagSet("cap show", capShowUsage)
	m.addNetFlags(fs, &nf)
	fs.StringVar(&author, "author", "", "the package's author (npub or hex), when several publish the name")
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("cap show: want one capability reference (usage: agentnode %s)", capShowUsage)
	}
	s, err := m.dial(ctx, &nf)
	if err != nil {
		return fmt.Errorf("cap show: %w", err)
	}
	defer s.Close()
	e, err := registry.New(s).Resolve(ctx, pos[0], author)
	if err != nil {
		return fmt.Errorf("cap show: %w", err)
	}
	v := capShowView{capabilityView: viewCapability(*e), SchemaURI: e.SchemaURI, Content: e.Event.Content}
	if p := e.Package; p != nil {
		v.Prompt = p.Prompt
	}
	if asJSON {
		return writeJSON(m.Stdout, v)
	}
	printCapability(m.Stdout, v)
	return nil
}

func printCapability(w io.Writer, v capShowView) {
	t := newTable(w)
	fmt.Fprintf(t, "URI\t%s\n", v.URI)
	fmt.Fprintf(t, "Title\t%s\n", orDash(v.Title))
	fmt.Fprintf(t, "Description\t%s\n", oneLine(orDash(v.Description), 100))
	fmt.Fprintf(t, "Author\t%s\n", v.Npub)
	fmt.Fprintf(t, "Event\t%s\n", v.EventID)
	fmt.Fprintf(t, "Naddr\t%s\n", v.Naddr)
	fmt.Fprintf(t, "SHA-256\t%s\n", v.SHA256)
	fmt.Fprintf(t, "Tools\t%s\n", orDash(strings.Join(v.Tools, ", ")))
	fmt.Fprintf(t, "Permissions\t%s\n", orDash(strings.Join(v.Permissions, ", ")))
	for _, a := range v.Alternatives {
		fmt.Fprintf(t, "Also by\t%s (version %s, %s)\n", npub(a.Author), a.Version, a.Naddr)
	}
	t.Flush()
}
