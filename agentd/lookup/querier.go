package lookup

import (
	"context"
	"slices"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/relay"
)

// lookable are the kinds Querier looks up when the local store lacks them:
// profiles, owner claims (NIP-AE 14199) and relay lists.
var lookable = []int{0, 14199, kindRelayList}

// lookableAddressed are the addressable kinds Querier looks up by address
// (kind, author, "d"): capability packages (30199) and teams (34199).
var lookableAddressed = []int{30199, 34199}

// maxAuthorsPerQuery bounds the authors one query looks up.
const maxAuthorsPerQuery = 10

// Querier returns the local store as a reader that looks up what it lacks
// (see the package doc); it satisfies relay.Querier.
func (l *Lookup) Querier() *Querier { return &Querier{l: l} }

// Querier is Lookup.Querier's reader.
type Querier struct{ l *Lookup }

// QuerySync answers filter locally; when filter asks for lookable kinds of
// named authors (and nothing else), the authors with no local answer are
// looked up (at most maxAuthorsPerQuery) and what was found is added.
func (q *Querier) QuerySync(ctx context.Context, filter nostr.Filter) ([]*nostr.Event, error) {
	local, err := q.l.cfg.Local.QuerySync(ctx, filter)
	if err != nil {
		return nil, err
	}
	q.l.noteHints(local)
	if len(local) == 0 {
		if p, ok := addressOf(filter); ok { // a package's or other address's naddr
			found, _ := q.l.Resolve(ctx, p)
			return found, nil
		}
	}
	if byIDs(filter) {
		return q.missingIDs(ctx, filter, local), nil
	}
	if !byAuthors(filter) {
		return local, nil
	}
	missing := missingAuthors(filter.Authors, local)
	if len(missing) == 0 {
		return local, nil
	}
	// One lookup for all of them (one round of relays, bounded by the
	// lookup's timeout); a single author's NIP-65 write relays are asked
	// too.
	author := ""
	if len(missing) == 1 {
		author = missing[0]
	}
	f := nostr.Filter{Kinds: filter.Kinds, Authors: missing, Limit: 10 * len(missing)}
	hints := append(relay.Hints(ctx), q.l.hintsFor(missing)...) // a request's nprofile, the stored tags' hints
	found, _ := q.l.Find(ctx, f, author, hints)                 // not found, busy: the local answer stands
	return append(local, found...), nil
}

// missingIDs looks up the ids of filter local lacks (at most
// maxAuthorsPerQuery), on the peers and the hints remembered for them, and
// adds what was found.
func (q *Querier) missingIDs(ctx context.Context, filter nostr.Filter, local []*nostr.Event) []*nostr.Event {
	var missing, keys []string
	for _, id := range filter.IDs {
		if len(missing) < maxAuthorsPerQuery && !slices.ContainsFunc(local, func(e *nostr.Event) bool { return e.ID == id }) {
			missing = append(missing, id)
			keys = append(keys, eventHint(id))
		}
	}
	if len(missing) == 0 {
		return local
	}
	f := nostr.Filter{IDs: missing, Kinds: filter.Kinds, Limit: len(missing)}
	found, _ := q.l.Find(ctx, f, "", q.l.hinted(keys...))
	return append(local, found...)
}

// Source is Lookup.Source.
func (q *Querier) Source(id string) string { return q.l.Source(id) }

// byIDs: event ids, perhaps kinds, nothing else.
func byIDs(f nostr.Filter) bool {
	return len(f.IDs) > 0 && len(f.Authors) == 0 && len(f.Tags) == 0 && f.Search == ""
}

// addressOf reads a filter for one address: one addressable kind of
// lookableAddressed, one author, one "d" value and nothing else.
func addressOf(f nostr.Filter) (Pointer, bool) {
	if len(f.Kinds) != 1 || !slices.Contains(lookableAddressed, f.Kinds[0]) || len(f.Authors) != 1 || len(f.IDs) > 0 ||
		len(f.Tags) != 1 || len(f.Tags["d"]) != 1 || f.Search != "" {
		return Pointer{}, false
	}
	return Pointer{Kind: f.Kinds[0], Author: f.Authors[0], Identifier: f.Tags["d"][0]}, true
}

// byAuthors: only lookable kinds, named authors, no ids, tags or search.
func byAuthors(f nostr.Filter) bool {
	if len(f.Authors) == 0 || len(f.Kinds) == 0 || len(f.IDs) > 0 || len(f.Tags) > 0 || f.Search != "" {
		return false
	}
	for _, k := range f.Kinds {
		if !slices.Contains(lookable, k) {
			return false
		}
	}
	return true
}

// missingAuthors are the authors with no event in got, at most
// maxAuthorsPerQuery.
func missingAuthors(authors []string, got []*nostr.Event) []string {
	var out []string
	for _, a := range authors {
		if len(out) < maxAuthorsPerQuery && !slices.ContainsFunc(got, func(e *nostr.Event) bool { return e.PubKey == a }) {
			out = append(out, a)
		}
	}
	return out
}
