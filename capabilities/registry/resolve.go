package registry

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/capabilities/cap"
	"github.com/agentnode/agentnode/events"
	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
)

// Resolve finds one package version. ref is a capability URI
// (did:nuwa:cap:<name>[@<version>]), a bare <name>[@<version>], or a NIP-19
// naddr of a kind-30199 event (resolved exactly: kind, author, d). A missing
// version means the latest (cap.CompareForLatest: the highest release by
// semver, every release above every pre-release; created_at plays no part). author (hex or npub, optional) restricts the
// search to one author. When several authors publish the name, the rule of
// docs/REGISTRY.md picks one and the others are listed in Alternatives.
// The entry carries the fully parsed Package. Errors: ErrBadRef,
// ErrBadAuthor, ErrNotFound (wrapped with the ref), ErrInvalid (the
// chosen package fails acp.FromEvent).
func (r *Registry) Resolve(ctx context.Context, ref string, author string) (*Entry, error) {
	ref = strings.TrimSpace(ref)
	if strings.HasPrefix(ref, "naddr1") {
		return r.resolveNaddr(ctx, ref)
	}
	name, version, err := acp.ParseCapURI(ref)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadRef, err)
	}
	if author, err = NormalizeAuthor(author); err != nil {
		return nil, err
	}
	if err := r.ensureLoaded(ctx); err != nil {
		return nil, err
	}
	r.mu.RLock()
	e := r.pick(name, version, author)
	r.mu.RUnlock()
	if e == nil {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, ref)
	}
	return r.withPackage(e)
}

// resolveNaddr reads the one event an naddr names from the source.
func (r *Registry) resolveNaddr(ctx context.Context, ref string) (*Entry, error) {
	prefix, data, err := nip19.Decode(ref)
	ptr, ok := data.(nostr.EntityPointer)
	if err != nil || prefix != "naddr" || !ok || ptr.Kind != events.KindCapability {
		return nil, fmt.Errorf("%w: %q is not the naddr of a kind-30199 event", ErrBadRef, ref)
	}
	evts, err := r.src.QuerySync(ctx, nostr.Filter{Kinds: []int{events.KindCapability},
		Authors: []string{ptr.PublicKey}, Tags: nostr.TagMap{"d": {ptr.Identifier}}})
	if err != nil {
		return nil, fmt.Errorf("registry: resolve %s: %w", ref, err)
	}
	var best *Entry
	for _, evt := range evts {
		if e := r.entryOf(evt); e != nil && (best == nil || e.CreatedAt.After(best.CreatedAt)) {
			best = e
		}
	}
	if best == nil {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, ref)
	}
	return r.withPackage(best)
}

// pick applies the author rule to name's entries matching version and
// author, and returns a copy of the winner with the alternatives.
func (r *Registry) pick(name, version, author string) *Entry {
	byAuthor := map[string]*Entry{} // author -> best matching version
	for _, e := range r.idx.versions(name, version, author) {
		if b := byAuthor[e.Author]; b == nil || cap.CompareForLatest(e.Version, b.Version) > 0 {
			byAuthor[e.Author] = e
		}
	}
	if len(byAuthor) == 0 {
		return nil
	}
	first := r.firstPublished(name)
	winner := r.chooseAuthor(byAuthor, first)
	out := *byAuthor[winner]
	out.Alternatives = nil
	for _, a := range sortedAuthors(byAuthor, first) {
		if a != winner {
			out.Alternatives = append(out.Alternatives, byAuthor[a].alternative(first[a]))
		}
	}
	return &out
}

// chooseAuthor: the only author; else the first preferred author present;
// else the first to publish the name (earliest created_at of any of their
// versions; ties by pubkey).
func (r *Registry) chooseAuthor(byAuthor map[string]*Entry, first map[string]time.Time) string {
	for _, p := range r.preferred {
		if _, ok := byAuthor[p]; ok {
			return p
		}
	}
	return sortedAuthors(byAuthor, first)[0]
}

// firstPublished maps each author of name to their earliest event for it.
func (r *Registry) firstPublished(name string) map[string]time.Time {
	first := map[string]time.Time{}
	for _, e := range r.idx.byName[name] {
		if t, ok := first[e.Author]; !ok || e.CreatedAt.Before(t) {
			first[e.Author] = e.CreatedAt
		}
	}
	return first
}

// sortedAuthors orders the authors by first publication, then pubkey.
func sortedAuthors(byAuthor map[string]*Entry, first map[string]time.Time) []string {
	authors := make([]string, 0, len(byAuthor))
	for a := range byAuthor {
		authors = append(authors, a)
	}
	slices.SortFunc(authors, func(a, b string) int {
		if c := first[a].Compare(first[b]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return authors
}

// NormalizeAuthor turns an npub or hex pubkey into lower-case hex; "" stays "".
func NormalizeAuthor(s string) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", nil
	case strings.HasPrefix(s, "npub1"):
		prefix, data, err := nip19.Decode(s)
		if pk, ok := data.(string); err == nil && prefix == "npub" && ok {
			return pk, nil
		}
	case nostr.IsValid32ByteHex(strings.ToLower(s)):
		return strings.ToLower(s), nil
	}
	return "", fmt.Errorf("%w: %q", ErrBadAuthor, s)
}
