package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
)

// definitionView is the stable JSON form of a definition.
type definitionView struct {
	ID           string    `json:"id"`
	Nevent       string    `json:"nevent"`
	PubKey       string    `json:"pubkey"`
	Npub         string    `json:"npub"`
	CreatedAt    int64     `json:"created_at"`
	Slug         string    `json:"slug"`
	Title        string    `json:"title"`
	Role         string    `json:"role"`
	Instructions string    `json:"instructions"`
	UseCriteria  string    `json:"use_criteria"`
	Description  string    `json:"description"`
	Image        string    `json:"image"`
	Tools        []string  `json:"tools"`
	Version      string    `json:"ver"`
	Content      string    `json:"content"`
	Files        []refView `json:"files"`
	Forks        []refView `json:"forks"`
	Unread       []string  `json:"unread_tags,omitempty"` // tags this node does not interpret
}

// refView is a definition's file or fork reference.
type refView struct {
	ID    string `json:"id"`
	Relay string `json:"relay,omitempty"`
}

func viewDefinition(d *events.Definition) definitionView {
	return definitionView{
		ID: d.ID, PubKey: d.PubKey, Npub: npub(d.PubKey), CreatedAt: int64(d.CreatedAt),
		Nevent: pointer(&nostr.Event{ID: d.ID, PubKey: d.PubKey, Kind: events.KindDefinition}, nil),
		Slug:   d.Slug, Title: d.Title, Role: d.Role, Instructions: d.Instructions,
		UseCriteria: d.UseCriteria, Description: d.Description, Image: d.Image,
		Tools: nonNil(d.Tools), Version: d.Version, Content: d.Content,
		Files: viewRefs(d.Files), Forks: viewRefs(d.Forks), Unread: d.Unread,
	}
}

func viewRefs(refs []events.EventRef) []refView {
	out := []refView{}
	for _, r := range refs {
		out = append(out, refView{ID: r.ID, Relay: r.Relay})
	}
	return out
}

// defListFlags holds def list's command line.
type defListFlags struct {
	listFlags
	search      string
	authors     stringList
	tool        string
	allVersions bool
}

const defListUsage = "def list [--search Q] [--author NPUB]... [--tool NAME] [--all-versions] [--limit N] [--relay URL]... [--json]"

// runDefList: def list (see defListUsage). Newest first; by default only
// the latest version per author and slug (or title).
func runDefList(ctx context.Context, m *Main, args []string) error {
	f := &defListFlags{}
	fs := m.newFlagSet("def list", defListUsage)
	m.addListFlags(fs, &f.listFlags, 50, "definitions")
	fs.StringVar(&f.search, "search", "", "full-text search (NIP-50) over title, description, role, use-criteria, content")
	fs.Var(&f.authors, "author", "only definitions by this author (npub or hex), repeatable")
	fs.StringVar(&f.tool, "tool", "", "only definitions that expect this tool")
	fs.BoolVar(&f.allVersions, "all-versions", false, "every version, not only the latest")
	teams := fs.Bool("teams", false, "list teams (kind 34199) instead: title, members, the default agent's definition")
	if err := f.parse(fs, args, "def list"); err != nil {
		return err
	}
	authors, err := pubkeyArgs("def list: --author", f.authors)
	if err != nil {
		return err
	}
	s, err := m.dial(ctx, &f.net)
	if err != nil {
		return fmt.Errorf("def list: %w", err)
	}
	defer s.Close()
	if *teams {
		return m.listTeams(ctx, s, authors, f.limit, f.json)
	}
	defs, err := f.find(ctx, s, authors)
	if err != nil {
		return fmt.Errorf("def list: %w", err)
	}
	return m.printDefinitions(defs, f.json)
}

// find queries, resolves versions, filters, sorts newest first and limits.
func (f *defListFlags) find(ctx context.Context, s *session, authors []string) ([]*events.Definition, error) {
	filter := nostr.Filter{Kinds: []int{events.KindDefinition}, Authors: authors, Search: f.search, Limit: fetchLimit}
	evts, err := s.QuerySync(ctx, filter)
	if err != nil {
		return nil, err
	}
	defs := parseDefinitions(evts)
	if !f.allVersions {
		if defs, err = latestOf(ctx, s, defs, f.search != ""); err != nil {
			return nil, err
		}
	}
	if f.tool != "" {
		defs = slices.DeleteFunc(defs, func(d *events.Definition) bool { return !slices.Contains(d.Tools, f.tool) })
	}
	slices.SortFunc(defs, func(a, b *events.Definition) int {
		return cmp.Or(cmp.Compare(b.CreatedAt, a.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return defs[:min(len(defs), max(f.limit, 0))], nil
}

// latestOf keeps the latest version of each definition. Search results
// may hold only an older version, so for them the authors' other versions
// are fetched and a match is kept only if it is still the latest.
func latestOf(ctx context.Context, s *session, matches []*events.Definition, searched bool) ([]*events.Definition, error) {
	if !searched || len(matches) == 0 {
		return events.LatestDefinitions(matches), nil
	}
	var authors []string
	matched := map[string]bool{}
	for _, d := range matches {
		matched[d.ID] = true
		if !slices.Contains(authors, d.PubKey) {
			authors = append(authors, d.PubKey)
		}
	}
	evts, err := s.QuerySync(ctx, nostr.Filter{Kinds: []int{events.KindDefinition}, Authors: authors, Limit: fetchLimit})
	if err != nil {
		return nil, err
	}
	latest := events.LatestDefinitions(parseDefinitions(evts))
	return slices.DeleteFunc(latest, func(d *events.Definition) bool { return !matched[d.ID] }), nil
}

func (m *Main) printDefinitions(defs []*events.Definition, asJSON bool) error {
	return printList(m.Stdout, defs, asJSON, viewDefinition, "no definitions found",
		"TITLE\tVER\tSLUG\tAUTHOR\tTOOLS\tCREATED\tID",
		func(d *events.Definition) string {
			return strings.Join([]string{oneLine(d.Title, 40), d.Version, orDash(d.Slug), shortNpub(d.PubKey),
				orDash(oneLine(strings.Join(d.Tools, ","), 30)), date(d.CreatedAt), d.ID}, "\t")
		})
}
