package main

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
)

// definitionDetail is def show's JSON: the definition, how many lessons
// reference it, and the latest version of the same definition.
type definitionDetail struct {
	definitionView
	Lessons  int    `json:"lessons"`
	LatestID string `json:"latest_id"` // equals id when this is the latest version
}

const defShowUsage = "def show <nevent|note|hex id|naddr|npub:slug> [--relay URL]... [--json]"

// runDefShow: def show (see defShowUsage). npub:slug (or title, for
// definitions without a slug) means the latest version.
func runDefShow(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("def show", defShowUsage)
	var nf netFlags
	m.addNetFlags(fs, &nf)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("def show: want exactly one definition reference, got %d", len(pos))
	}
	ref, err := parseDefRef(pos[0])
	if err != nil {
		return usagef("def show: %v", err)
	}
	s, err := m.dial(ctx, &nf)
	if err != nil {
		return fmt.Errorf("def show: %w", err)
	}
	defer s.Close()
	detail, err := showDefinition(ctx, s, ref)
	if err != nil {
		return fmt.Errorf("def show: %w", err)
	}
	if *asJSON {
		return writeJSON(m.Stdout, detail)
	}
	return m.printDefinitionDetail(detail)
}

// showDefinition resolves ref and gathers its lesson count and latest version.
func showDefinition(ctx context.Context, s *session, ref defRef) (*definitionDetail, error) {
	d, err := ref.resolve(ctx, s)
	if err != nil {
		return nil, err
	}
	lessons, err := s.QuerySync(ctx, nostr.Filter{Kinds: []int{events.KindLesson}, Tags: nostr.TagMap{"e": {d.ID}}, Limit: fetchLimit})
	if err != nil {
		return nil, err
	}
	versions, err := definitionVersions(ctx, s, d.PubKey, cmp.Or(d.Slug, d.Title))
	if err != nil {
		return nil, err
	}
	latest := d.ID
	if l := events.LatestDefinitions(append(versions, d)); len(l) > 0 {
		latest = l[0].ID
	}
	return &definitionDetail{definitionView: viewDefinition(d), Lessons: len(lessons), LatestID: latest}, nil
}

func (m *Main) printDefinitionDetail(d *definitionDetail) error {
	t := newTable(m.Stdout)
	row := func(name, value string) {
		if value != "" {
			// continuation lines stay in the value column
			fmt.Fprintf(t, "%s\t%s\n", name, strings.ReplaceAll(strings.TrimRight(value, "\n"), "\n", "\n\t"))
		}
	}
	row("title", d.Title)
	row("version", d.Version)
	row("slug", d.Slug)
	row("author", d.Npub)
	row("created", date(nostr.Timestamp(d.CreatedAt)))
	row("id", d.ID)
	row("nevent", d.Nevent)
	row("description", d.Description)
	row("role", d.Role)
	row("instructions", d.Instructions)
	row("use criteria", d.UseCriteria)
	row("tools", strings.Join(d.Tools, ", "))
	row("image", d.Image)
	for _, f := range d.Files {
		row("file", f.ID)
	}
	for _, f := range d.Forks {
		row("fork of", f.ID)
	}
	row("lessons", fmt.Sprint(d.Lessons))
	if len(d.Unread) > 0 {
		row("warning", "tags this node does not interpret (kept as published): "+strings.Join(d.Unread, ", "))
	}
	if d.LatestID != d.ID {
		row("newer version", d.LatestID)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	if d.Content != "" {
		fmt.Fprintf(m.Stdout, "\n%s\n", strings.TrimRight(d.Content, "\n"))
	}
	return nil
}
