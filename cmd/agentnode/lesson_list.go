package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
)

// lessonView is the stable JSON form of a lesson.
type lessonView struct {
	ID           string   `json:"id"`
	Nevent       string   `json:"nevent"`
	PubKey       string   `json:"pubkey"`
	Npub         string   `json:"npub"`
	CreatedAt    int64    `json:"created_at"`
	DefinitionID string   `json:"definition_id"`
	Title        string   `json:"title"`
	Category     string   `json:"category"`
	Topics       []string `json:"topics"`
	Content      string   `json:"content"`
}

func viewLesson(l *events.Lesson) lessonView {
	return lessonView{
		ID: l.ID, PubKey: l.PubKey, Npub: npub(l.PubKey), CreatedAt: int64(l.CreatedAt),
		Nevent:       pointer(&nostr.Event{ID: l.ID, PubKey: l.PubKey, Kind: events.KindLesson}, nil),
		DefinitionID: l.DefinitionID, Title: l.Title, Category: l.Category,
		Topics: nonNil(l.Topics), Content: l.Content,
	}
}

// lessonListFlags holds lesson list's command line.
type lessonListFlags struct {
	listFlags
	definition string
	authors    stringList
	category   string
	search     string
}

const lessonListUsage = "lesson list [--definition REF] [--author NPUB]... [--category C] [--search Q] [--limit N] [--relay URL]... [--json]"

// runLessonList: lesson list (see lessonListUsage), newest first.
func runLessonList(ctx context.Context, m *Main, args []string) error {
	const cmd = "lesson list"
	f := &lessonListFlags{}
	fs := m.newFlagSet(cmd, lessonListUsage)
	m.addListFlags(fs, &f.listFlags, 50, "lessons")
	fs.StringVar(&f.definition, "definition", "", "only lessons about this definition (nevent, note, hex, naddr or npub:slug)")
	fs.Var(&f.authors, "author", "only lessons by this author (npub or hex), repeatable")
	fs.StringVar(&f.category, "category", "", "only lessons of this category")
	fs.StringVar(&f.search, "search", "", "full-text search (NIP-50) over title, category, topics, content")
	if err := f.parse(fs, args, cmd); err != nil {
		return err
	}
	filter, ref, err := f.filter()
	if err != nil {
		return err
	}
	s, err := m.dial(ctx, &f.net)
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	defer s.Close()
	lessons, err := f.find(ctx, s, filter, ref)
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	return m.printLessons(lessons, f.json)
}

// filter builds the query from the flags; ref is set when --definition
// names a definition by author and slug, to be resolved on the relays.
func (f *lessonListFlags) filter() (nostr.Filter, *defRef, error) {
	filter := nostr.Filter{Kinds: []int{events.KindLesson}, Search: f.search, Limit: fetchLimit}
	authors, err := pubkeyArgs("lesson list: --author", f.authors)
	if err != nil {
		return filter, nil, err
	}
	filter.Authors = authors
	if f.definition == "" {
		return filter, nil, nil
	}
	ref, err := parseDefRef(f.definition)
	if err != nil {
		return filter, nil, usagef("lesson list: --definition: %v", err)
	}
	if ref.ID != "" {
		filter.Tags = nostr.TagMap{"e": {ref.ID}}
		return filter, nil, nil
	}
	return filter, &ref, nil
}

// find runs the query and applies the filters relays cannot (category, limit).
func (f *lessonListFlags) find(ctx context.Context, s *session, filter nostr.Filter, ref *defRef) ([]*events.Lesson, error) {
	if ref != nil {
		def, err := ref.resolve(ctx, s)
		if err != nil {
			return nil, fmt.Errorf("--definition: %w", err)
		}
		filter.Tags = nostr.TagMap{"e": {def.ID}}
	}
	evts, err := s.QuerySync(ctx, filter)
	if err != nil {
		return nil, err
	}
	var out []*events.Lesson
	for _, e := range evts {
		l, err := events.ParseLesson(e)
		if err != nil || (f.category != "" && l.Category != f.category) {
			continue
		}
		out = append(out, l)
	}
	return out[:min(len(out), max(f.limit, 0))], nil
}

func (m *Main) printLessons(lessons []*events.Lesson, asJSON bool) error {
	return printList(m.Stdout, lessons, asJSON, viewLesson, "no lessons found",
		"TITLE\tCATEGORY\tAUTHOR\tCREATED\tID",
		func(l *events.Lesson) string {
			return strings.Join([]string{oneLine(l.Title, 50), orDash(l.Category), shortNpub(l.PubKey), date(l.CreatedAt), l.ID}, "\t")
		})
}
