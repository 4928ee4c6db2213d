package registry

import (
	"context"
	"slices"
	"strings"
)

// Filters narrow a search. Zero values do not filter.
type Filters struct {
	Author     string `json:"author,omitempty"`     // hex or npub
	Tool       string `json:"tool,omitempty"`       // the package declares this tool
	Permission string `json:"permission,omitempty"` // the package requires this permission
	Limit      int    `json:"limit,omitempty"`      // default DefaultLimit, at most MaxLimit
}

// Search limits.
const (
	DefaultLimit = 20
	MaxLimit     = 500
)

// Search finds packages whose name, display name, description, triggers or
// tools contain the words of query (any word; ranked by where the words
// are found and how many of them match, then newest first). One entry per
// (author, name): its latest version. An empty query lists every package
// that passes the filters, by name. Entries carry Metadata and Tools, not
// Package (Resolve one to get it).
func (r *Registry) Search(ctx context.Context, query string, f Filters) ([]Entry, error) {
	author, err := NormalizeAuthor(f.Author)
	if err != nil {
		return nil, err
	}
	f.Author = author
	if err := r.ensureLoaded(ctx); err != nil {
		return nil, err
	}
	if r.relaySearch && strings.TrimSpace(query) != "" {
		return r.searchRelay(ctx, query, f)
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	scored := r.candidates(query)
	hits := make([]hit, 0, len(scored))
	for key, score := range scored {
		if e := r.idx.latest[key]; e != nil && f.match(e) {
			hits = append(hits, hit{e, score})
		}
	}
	slices.SortFunc(hits, compareHits)
	return entriesOf(hits, f.limit()), nil
}

type hit struct {
	e     *Entry
	score float64
}

// candidates scores the (author, name) keys for query; every key with
// score 0 for an empty query.
func (r *Registry) candidates(query string) map[string]float64 {
	words := tokenize(query)
	slices.Sort(words)
	words = slices.Compact(words) // a repeated word counts once
	if whole := strings.ToLower(strings.TrimSpace(query)); whole != "" && !slices.Contains(words, whole) {
		words = append(words, whole)
	}
	if len(words) == 0 {
		all := make(map[string]float64, len(r.idx.latest))
		for key := range r.idx.latest {
			all[key] = 0
		}
		return all
	}
	return r.idx.search.score(words)
}

func (f Filters) match(e *Entry) bool {
	if f.Author != "" && e.Author != f.Author {
		return false
	}
	if f.Tool != "" && !slices.Contains(e.Tools, f.Tool) {
		return false
	}
	if f.Permission != "" && !slices.Contains(e.Metadata.Permissions.Require, f.Permission) {
		return false
	}
	return true
}

func (f Filters) limit() int {
	switch {
	case f.Limit <= 0:
		return DefaultLimit
	case f.Limit > MaxLimit:
		return MaxLimit
	}
	return f.Limit
}

// compareHits: higher score, then newer, then name, then author.
func compareHits(a, b hit) int {
	if a.score != b.score {
		if a.score > b.score {
			return -1
		}
		return 1
	}
	if c := b.e.CreatedAt.Compare(a.e.CreatedAt); c != 0 && a.score > 0 {
		return c
	}
	if c := strings.Compare(a.e.Name, b.e.Name); c != 0 {
		return c
	}
	return strings.Compare(a.e.Author, b.e.Author)
}

func entriesOf(hits []hit, limit int) []Entry {
	out := make([]Entry, 0, min(limit, len(hits)))
	for _, h := range hits[:min(limit, len(hits))] {
		out = append(out, *h.e)
	}
	return out
}
