package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentnode/agentnode/capabilities/registry"
)

// capabilityView is the stable JSON form of a published package version.
type capabilityView struct {
	URI          string                 `json:"uri"`
	Name         string                 `json:"name"`
	Version      string                 `json:"version"`
	Title        string                 `json:"title"`
	Description  string                 `json:"description"`
	PubKey       string                 `json:"pubkey"`
	Npub         string                 `json:"npub"`
	EventID      string                 `json:"event_id"`
	Naddr        string                 `json:"naddr"`
	SHA256       string                 `json:"sha256"`
	CreatedAt    int64                  `json:"created_at"`
	Tools        []string               `json:"tools"`
	Permissions  []string               `json:"permissions"`
	Alternatives []registry.Alternative `json:"alternatives,omitempty"`
}

func viewCapability(e registry.Entry) capabilityView {
	v := capabilityView{URI: e.URI, Name: e.Name, Version: e.Version, PubKey: e.Author, Npub: npub(e.Author),
		EventID: e.EventID, Naddr: e.Naddr, SHA256: e.SHA256(), CreatedAt: e.CreatedAt.Unix(),
		Title: e.Metadata.Name, Description: e.Metadata.Description,
		Tools: nonNil(e.Tools), Permissions: nonNil(e.Metadata.Permissions.Require), Alternatives: e.Alternatives}
	return v
}

// capSearchFlags holds cap search's command line.
type capSearchFlags struct {
	listFlags
	author     string
	tool       string
	permission string
}

const capSearchUsage = "cap search <query> [--author NPUB] [--tool NAME] [--permission P] [--limit N] [--relay URL]... [--json]"

// runCapSearch: cap search (see capSearchUsage). Ranked full-text search
// over the packages (kind 30199) of the relays: the latest version per
// author and name.
func runCapSearch(ctx context.Context, m *Main, args []string) error {
	f := &capSearchFlags{}
	fs := m.newFlagSet("cap search", capSearchUsage)
	m.addListFlags(fs, &f.listFlags, registry.DefaultLimit, "packages")
	fs.StringVar(&f.author, "author", "", "only packages by this author (npub or hex)")
	fs.StringVar(&f.tool, "tool", "", "only packages declaring this tool")
	fs.StringVar(&f.permission, "permission", "", "only packages requiring this permission (state.create, ...)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	s, err := m.dial(ctx, &f.net)
	if err != nil {
		return fmt.Errorf("cap search: %w", err)
	}
	defer s.Close()
	filters := registry.Filters{Author: f.author, Tool: f.tool, Permission: f.permission, Limit: f.limit}
	hits, err := registry.New(s).Search(ctx, strings.Join(pos, " "), filters)
	if err != nil {
		return fmt.Errorf("cap search: %w", err)
	}
	return printList(m.Stdout, hits, f.json, viewCapability, "no capabilities found",
		"URI\tAUTHOR\tTOOLS\tDESCRIPTION", capRow)
}

func capRow(e registry.Entry) string {
	v := viewCapability(e)
	return strings.Join([]string{v.URI, shortNpub(v.PubKey), orDash(strings.Join(v.Tools, ",")), oneLine(orDash(v.Description), 60)}, "\t")
}
