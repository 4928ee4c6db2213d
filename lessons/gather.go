package lessons

import (
	"context"
	"fmt"
	"slices"

	"github.com/agentnode/agentnode/events"
	"github.com/nbd-wtf/go-nostr"
)

// Querier reads stored events. relay.Relay satisfies it in-process; the
// CLI's session (internal/relayclient connections) over websockets. Implementations
// return events matching filter (newest first is assumed for paging), at
// most filter.Limit of them, and must only return events whose signatures
// they have verified: this package does not re-check signatures.
type Querier interface {
	QuerySync(ctx context.Context, filter nostr.Filter) ([]*nostr.Event, error)
}

// Subject is the agent whose effective behaviour is composed.
type Subject struct {
	Agent      string             // the agent's pubkey (64-hex)
	Owner      string             // its owner's pubkey (64-hex), as verified by the caller
	Definition *events.Definition // the definition it runs
	Nudges     []*events.Nudge    // nudges attached to the agent (and to the message, if any)
}

// Evidence is every event the trust policy looks at for one subject, as
// gathered from a store. Evaluate reads it; Key hashes it.
type Evidence struct {
	Lessons   []*nostr.Event // kind 4129 referencing the definition ("e"), and the agent's own unbound ones
	Comments  []*nostr.Event // kind 1111 on those lessons (NIP-22, lenient)
	Deletions []*nostr.Event // kind 5 naming a lesson or comment ("e")
	Profiles  []*nostr.Event // kind 0 of lesson and comment authors
	Claims    []*nostr.Event // kind 14199 of the owners those profiles name
	Contacts  []*nostr.Event // kind 3 of the agent's owner
	// Truncated is set when a limit cut a query short: some evidence was not read.
	Truncated bool
}

// Limits bound what Gather reads.
type Limits struct {
	Page        int // events asked for per query (relays commonly cap at 500)
	Batch       int // ids or pubkeys per filter
	MaxLessons  int // newest lessons read
	MaxComments int // newest comments read
}

// DefaultLimits are the limits Gather uses.
var DefaultLimits = Limits{Page: 500, Batch: 200, MaxLessons: 20_000, MaxComments: 50_000}

// withDefaults fills zero fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	for _, f := range []struct{ v, def *int }{
		{&l.Page, &d.Page}, {&l.Batch, &d.Batch}, {&l.MaxLessons, &d.MaxLessons}, {&l.MaxComments, &d.MaxComments},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	return l
}

// GatherLimited reads, in batched and bounded queries: the lessons of the
// definition, the comments on them, deletions of either, the kind 0 of
// every author, the kind 14199 of the owners those profiles name, and the
// kind 3 of the agent's owner.
func GatherLimited(ctx context.Context, q Querier, s Subject, lim Limits) (*Evidence, error) {
	if s.Definition == nil {
		return nil, ErrNoDefinition
	}
	g := &gatherer{q: q, lim: lim.withDefaults(), ev: &Evidence{}}
	steps := []func(context.Context, Subject) error{g.lessons, g.comments, g.deletions, g.profiles, g.claims, g.contacts}
	for _, step := range steps {
		if err := step(ctx, s); err != nil {
			return nil, fmt.Errorf("lessons: gather: %w", err)
		}
	}
	return g.ev, nil
}

// gatherer carries one Gather's state.
type gatherer struct {
	q   Querier
	lim Limits
	ev  *Evidence
}

// lessons reads the lessons naming the definition and the agent's own
// lessons (among which the unbound ones: no "e", docs/TRUST.md).
func (g *gatherer) lessons(ctx context.Context, s Subject) error {
	f := nostr.Filter{Kinds: []int{events.KindLesson}, Tags: nostr.TagMap{"e": {s.Definition.ID}}}
	bound, err := g.fetch(ctx, f, g.lim.MaxLessons)
	if err != nil || s.Agent == "" {
		g.ev.Lessons = bound
		return err
	}
	own, err := g.fetch(ctx, nostr.Filter{Kinds: []int{events.KindLesson}, Authors: []string{s.Agent}}, g.lim.MaxLessons)
	g.ev.Lessons = mergeEvents(bound, unboundOnly(own))
	return err
}

// unboundOnly keeps the events with no "e" tag.
func unboundOnly(evts []*nostr.Event) []*nostr.Event {
	var out []*nostr.Event
	for _, evt := range evts {
		if evt.Tags.Find("e") == nil {
			out = append(out, evt)
		}
	}
	return out
}

// comments reads NIP-22 comments ("E" = lesson, any depth, with or without
// "K") and lenient ones ("e" = lesson), merged; Evaluate keeps only those
// whose declared root kind, if any, is a lesson.
func (g *gatherer) comments(ctx context.Context, _ Subject) error {
	ids := eventIDs(g.ev.Lessons)
	strict := nostr.Filter{Kinds: []int{events.KindComment}}
	lenient := strict
	byRoot, err := g.fetchBatched(ctx, ids, func(b []string) nostr.Filter {
		strict.Tags = nostr.TagMap{"E": b}
		return strict
	}, g.lim.MaxComments)
	if err != nil {
		return err
	}
	byParent, err := g.fetchBatched(ctx, ids, func(b []string) nostr.Filter {
		lenient.Tags = nostr.TagMap{"e": b}
		return lenient
	}, g.lim.MaxComments)
	g.ev.Comments = mergeEvents(byRoot, byParent)
	return err
}

func (g *gatherer) deletions(ctx context.Context, _ Subject) error {
	ids := append(eventIDs(g.ev.Lessons), eventIDs(g.ev.Comments)...)
	var err error
	g.ev.Deletions, err = g.fetchBatched(ctx, ids, func(b []string) nostr.Filter {
		return nostr.Filter{Kinds: []int{events.KindDeletion}, Tags: nostr.TagMap{"e": b}}
	}, 2*len(ids)+g.lim.Page)
	return err
}

func (g *gatherer) profiles(ctx context.Context, _ Subject) error {
	authors := authorsOf(g.ev.Lessons, g.ev.Comments)
	var err error
	g.ev.Profiles, err = g.fetchBatched(ctx, authors, byAuthors(events.KindProfile), 2*len(authors)+g.lim.Page)
	return err
}

// claims reads the 14199 of every owner named by an agent profile of this definition.
func (g *gatherer) claims(ctx context.Context, s Subject) error {
	owners := namedOwners(g.ev.Profiles, s.Definition.ID)
	var err error
	g.ev.Claims, err = g.fetchBatched(ctx, owners, byAuthors(events.KindOwnerClaims), 2*len(owners)+g.lim.Page)
	return err
}

func (g *gatherer) contacts(ctx context.Context, s Subject) error {
	if s.Owner == "" {
		return nil
	}
	f := nostr.Filter{Kinds: []int{3}, Authors: []string{s.Owner}, Limit: 1}
	var err error
	g.ev.Contacts, err = g.q.QuerySync(ctx, f)
	return err
}

// byAuthors returns a filter builder for one kind by a batch of authors.
func byAuthors(kind int) func([]string) nostr.Filter {
	return func(b []string) nostr.Filter { return nostr.Filter{Kinds: []int{kind}, Authors: b} }
}

// namedOwners lists the owners named by profiles that run definition defID.
func namedOwners(profiles []*nostr.Event, defID string) []string {
	var owners []string
	for _, evt := range profiles {
		if p, err := events.ParseProfile(evt); err == nil && p.DefinitionID == defID && p.Owner != "" {
			owners = append(owners, p.Owner)
		}
	}
	return uniq(owners)
}

// authorsOf lists the distinct pubkeys of the given events.
func authorsOf(lists ...[]*nostr.Event) []string {
	var out []string
	for _, list := range lists {
		for _, evt := range list {
			out = append(out, evt.PubKey)
		}
	}
	return uniq(out)
}

func eventIDs(list []*nostr.Event) []string {
	out := make([]string, len(list))
	for i, evt := range list {
		out[i] = evt.ID
	}
	return out
}

// uniq sorts and deduplicates.
func uniq(list []string) []string {
	slices.Sort(list)
	return slices.Compact(list)
}
