package registry

import (
	"cmp"
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
// semver, every release above every pre-release; created_at plays no
// part). author (hex or npub, optional) restricts the search to one
// author. When several authors publish the name, the rule of
// docs/REGISTRY.md picks one — trusted (this call's, then the registry's
// preferred authors, in order), else the one this node saw first — and
// the others are listed in Alternatives; created_at never decides, since
// anyone can back-date an event. The entry carries the fully parsed
// Package. Errors: ErrBadRef, ErrBadAuthor, ErrNotFound (wrapped with the
// ref), ErrAmbiguous (several untrusted authors, none seen first),
// ErrInvalid (the chosen package fails acp.FromEvent).
func (r *Registry) Resolve(ctx context.Context, ref string, author string, trusted ...string) (*Entry, error) {
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
	e, err := r.pick(name, version, author, append(normalizeAll(trusted), r.preferred...))
	r.mu.RUnlock()
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, ref)
	}
	if e == nil {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, ref)
	}
	return r.withPackage(e)
}

// resolveNaddr reads the one event an naddr names from the source.
func (r *Registry) resolveNaddr(ctx context.Context, ref string) (*Entry, error) {
	ptr, err := events.ParseRef(ref) // not nip19.Decode: it panics on a malformed naddr
	if err != nil || ptr.ID != "" || ptr.Kind != events.KindCapability {
		return nil, fmt.Errorf("%w: %q is not the naddr of a kind-30199 event", ErrBadRef, ref)
	}
	evts, err := r.src.QuerySync(ctx, nostr.Filter{Kinds: []int{events.KindCapability},
		Authors: []string{ptr.Author}, Tags: nostr.TagMap{"d": {ptr.Identifier}}})
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
// author, and returns a copy of the winner with the alternatives (nil:
// none matches).
func (r *Registry) pick(name, version, author string, trusted []string) (*Entry, error) {
	byAuthor := map[string]*Entry{} // author -> best matching version
	for _, e := range r.idx.versions(name, version, author) {
		if b := byAuthor[e.Author]; b == nil || cap.CompareForLatest(e.Version, b.Version) > 0 {
			byAuthor[e.Author] = e
		}
	}
	if len(byAuthor) == 0 {
		return nil, nil
	}
	order := r.bySeen(name, byAuthor)
	winner, err := chooseAuthor(order, byAuthor, trusted, r.seenSeq(name))
	if err != nil {
		return nil, err
	}
	first := r.firstPublished(name)
	out := *byAuthor[winner]
	out.Alternatives = nil
	for _, a := range order {
		if a != winner {
			out.Alternatives = append(out.Alternatives, byAuthor[a].alternative(first[a]))
		}
	}
	return &out, nil
}

// chooseAuthor: the first trusted author present; else the only author;
// else the author this node saw first, when only one was (order is by
// first seen, then pubkey). Several authors seen at once (one Load, e.g.
// the CLI's, which has no memory) and none trusted: ErrAmbiguous.
func chooseAuthor(order []string, byAuthor map[string]*Entry, trusted []string, seq func(string) uint64) (string, error) {
	for _, p := range trusted {
		if _, ok := byAuthor[p]; ok {
			return p, nil
		}
	}
	if len(order) == 1 || seq(order[0]) < seq(order[1]) {
		return order[0], nil
	}
	var npubs []string
	for _, a := range order {
		if seq(a) != seq(order[0]) {
			break
		}
		npubs = append(npubs, npubOf(a))
	}
	return "", fmt.Errorf("%w: %d authors publish it and none is trusted here or was seen first: name one (--author, or the author field): %s",
		ErrAmbiguous, len(npubs), strings.Join(npubs, ", "))
}

// seenSeq returns when this node first saw each author of name (the
// seen log's sequence; never seen: the largest).
func (r *Registry) seenSeq(name string) func(string) uint64 {
	return func(author string) uint64 {
		if s, ok := r.seen.first(author, name); ok {
			return s
		}
		return ^uint64(0)
	}
}

// bySeen orders the authors by first seen, then pubkey.
func (r *Registry) bySeen(name string, byAuthor map[string]*Entry) []string {
	seq := r.seenSeq(name)
	authors := make([]string, 0, len(byAuthor))
	for a := range byAuthor {
		authors = append(authors, a)
	}
	slices.SortFunc(authors, func(a, b string) int {
		if c := cmp.Compare(seq(a), seq(b)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return authors
}

// firstPublished maps each author of name to their earliest event for it
// (what they claim: shown in Alternatives, never used to choose).
func (r *Registry) firstPublished(name string) map[string]time.Time {
	first := map[string]time.Time{}
	for _, e := range r.idx.byName[name] {
		if t, ok := first[e.Author]; !ok || e.CreatedAt.Before(t) {
			first[e.Author] = e.CreatedAt
		}
	}
	return first
}

// normalizeAll keeps the valid pubkeys of keys as lower-case hex.
func normalizeAll(keys []string) []string {
	var out []string
	for _, k := range keys {
		if hex, err := NormalizeAuthor(k); err == nil && hex != "" {
			out = append(out, hex)
		}
	}
	return out
}

func npubOf(pk string) string {
	if s, err := nip19.EncodePublicKey(pk); err == nil {
		return s
	}
	return pk
}

// NormalizeAuthor turns an npub or hex pubkey into lower-case hex; "" stays "".
func NormalizeAuthor(s string) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", nil
	case strings.HasPrefix(s, "npub1"):
		if pk, err := events.ParsePubKey(s); err == nil {
			return pk, nil
		}
	case nostr.IsValid32ByteHex(strings.ToLower(s)):
		return strings.ToLower(s), nil
	}
	return "", fmt.Errorf("%w: %q", ErrBadAuthor, s)
}
