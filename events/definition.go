package events

import (
	"cmp"
	"slices"
	"strings"

	"github.com/nbd-wtf/go-nostr"
)

// EventRef is a definition's ["e", id, relay, marker] tag.
type EventRef struct {
	ID     string
	Relay  string
	Marker string // MarkerFile, MarkerFork or ""
}

// Definition is a NIP-AE agent definition (kind 4199), in either the original
// shape (tags only) or the newer one (d slug, markdown content, e file/fork refs).
type Definition struct {
	ID        string
	PubKey    string
	CreatedAt nostr.Timestamp

	Slug         string // "d" tag (newer revision), may be ""
	Title        string
	Role         string
	Instructions string
	UseCriteria  string // "use-criteria"
	Description  string
	Image        string   // any URI but an active one (javascript:, ...); see ImageURL
	Category     string   // "category" (TENEX)
	Tools        []string // one "tool" tag each
	Version      string   // "ver" tag, "1" when absent
	Content      string   // markdown (newer revision)

	Files []EventRef // ["e", id, relay, "file"] (and TENEX's older "script")
	Forks []EventRef // ["e", id, relay, "fork"]
	Refs  []EventRef // ["e", id, relay] without a marker, or with one this package does not know

	// Unread names, once each in order of appearance, the tags the event
	// carries that this package does not interpret (TENEX's "skill",
	// "phase", a future revision's fields): kept in the stored event,
	// shown to people as such, never dropped silently (docs/INTEROP.md).
	Unread []string
}

// definitionTags are the tags ParseDefinition reads, plus the generic ones
// any event may carry (NIP-31 alt, NIP-89 client, NIP-40 expiration).
var definitionTags = map[string]bool{"d": true, "title": true, "role": true, "instructions": true,
	"use-criteria": true, "description": true, "image": true, "category": true, "tool": true, "ver": true,
	"e": true, "alt": true, "client": true, "expiration": true}

// unreadTags returns the names of tags not in known, once each.
func unreadTags(tags nostr.Tags, known map[string]bool) []string {
	var out []string
	for _, t := range tags {
		if len(t) > 0 && !known[t[0]] && !slices.Contains(out, t[0]) {
			out = append(out, t[0])
		}
	}
	return out
}

// MarkerScript is TENEX's older marker for a file reference (kind 1063);
// it is read as MarkerFile and written as MarkerFile.
const MarkerScript = "script"

// validateDefinition holds the kind-4199 rules. NIP-AE gives "ver" no form
// ("version number", default 1), "image" no scheme and "e" no marker list,
// so only what is unsafe or meaningless is refused: a definition with no
// name (neither "title" nor "d": NIP-AE does not require "title", and TENEX
// writes definitions named by "d" alone), a reference that names no event,
// an image URI that runs code.
var validateDefinition = all(
	checkTagNames,
	checkTitleOrSlug,
	eachValue("e", IsHex64, ErrBadID, ErrBadID.Error()),
	eachValue("image", isSafeImageURI, ErrBadValue, reasonImage),
	nonEmpty("tool"),
)

// checkTitleOrSlug refuses a definition with neither a title nor a d: it
// names nothing. A blank title present beside no d is refused as empty.
func checkTitleOrSlug(evt *nostr.Event) error {
	if !blank(valueOf(evt.Tags, "title")) || !blank(valueOf(evt.Tags, "d")) {
		return nil
	}
	if _, ok := firstValue(evt.Tags, "title"); ok {
		return invalidBecause(evt.Kind, "title", ErrBadValue, reasonEmptyValue)
	}
	return invalidBecause(evt.Kind, "title", ErrMissingTag, reasonTitleOrSlug)
}

// ParseDefinition validates a kind-4199 event and returns its typed view.
// Single-valued tags take their first occurrence.
func ParseDefinition(evt *nostr.Event) (*Definition, error) {
	if err := checkKind(evt, KindDefinition); err != nil {
		return nil, err
	}
	tags := evt.Tags
	d := &Definition{
		ID: evt.ID, PubKey: evt.PubKey, CreatedAt: evt.CreatedAt,
		Slug: valueOf(tags, "d"), Title: valueOf(tags, "title"), Role: valueOf(tags, "role"),
		Instructions: valueOf(tags, "instructions"), UseCriteria: valueOf(tags, "use-criteria"),
		Description: valueOf(tags, "description"), Image: valueOf(tags, "image"),
		Category: valueOf(tags, "category"),
		Tools:    valuesOf(tags, "tool"), Version: "1", Content: evt.Content,
	}
	if v := strings.TrimSpace(valueOf(tags, "ver")); v != "" {
		d.Version = v
	}
	if blank(d.Title) { // named by "d" alone (TENEX): its name is its title
		d.Title = d.Slug
	}
	d.addRefs(tags)
	d.Unread = unreadTags(tags, definitionTags)
	return d, nil
}

// addRefs sorts the "e" tags into Files, Forks and Refs.
func (d *Definition) addRefs(tags nostr.Tags) {
	for _, t := range tags {
		if !isTag(t, "e") {
			continue
		}
		r := EventRef{ID: tagAt(t, 1), Relay: tagAt(t, 2), Marker: tagAt(t, 3)}
		switch r.Marker {
		case MarkerFile, MarkerScript:
			r.Marker = MarkerFile
			d.Files = append(d.Files, r)
		case MarkerFork:
			d.Forks = append(d.Forks, r)
		default:
			d.Refs = append(d.Refs, r)
		}
	}
}

// Template returns the unsigned kind-4199 event for d. CreatedAt is left to
// the caller. It does not validate: run Validate on the result.
func (d *Definition) Template() nostr.Event {
	tags := appendOpt(nostr.Tags{}, "d", d.Slug)
	tags = append(tags, nostr.Tag{"title", d.Title})
	tags = appendOpt(tags, "role", d.Role)
	tags = appendOpt(tags, "instructions", d.Instructions)
	tags = appendOpt(tags, "use-criteria", d.UseCriteria)
	tags = appendOpt(tags, "description", d.Description)
	tags = appendEach(tags, "tool", d.Tools)
	tags = append(tags, nostr.Tag{"ver", cmp.Or(d.Version, "1")})
	tags = appendOpt(tags, "image", d.Image)
	tags = appendOpt(tags, "category", d.Category)
	tags = appendRefs(tags, d.Refs, "")
	tags = appendRefs(tags, d.Files, MarkerFile)
	tags = appendRefs(tags, d.Forks, MarkerFork)
	return nostr.Event{Kind: KindDefinition, Tags: tags, Content: d.Content}
}

// appendRefs appends one "e" tag per ref, carrying marker (if any).
func appendRefs(tags nostr.Tags, refs []EventRef, marker string) nostr.Tags {
	for _, r := range refs {
		t := nostr.Tag{"e", r.ID}
		switch {
		case marker != "":
			t = append(t, r.Relay, marker)
		case r.Relay != "":
			t = append(t, r.Relay)
		}
		tags = append(tags, t)
	}
	return tags
}

// Key identifies the versions of one definition: pubkey + ":" + (slug, else title).
func (d *Definition) Key() string {
	return d.PubKey + ":" + cmp.Or(d.Slug, d.Title)
}

// LatestDefinitions keeps the newest version per Key: the latest created_at
// wins; ties go to the higher ver (numerically when both are dotted numbers,
// else lexically), then to the lower id. The result is sorted by Key.
func LatestDefinitions(defs []*Definition) []*Definition {
	best := make(map[string]*Definition)
	for _, d := range defs {
		if d == nil {
			continue
		}
		k := d.Key()
		if cur, ok := best[k]; !ok || newerDefinition(d, cur) {
			best[k] = d
		}
	}
	out := make([]*Definition, 0, len(best))
	for _, d := range best {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b *Definition) int { return strings.Compare(a.Key(), b.Key()) })
	return out
}

// newerDefinition reports whether a supersedes b.
func newerDefinition(a, b *Definition) bool {
	if c := cmp.Compare(a.CreatedAt, b.CreatedAt); c != 0 {
		return c > 0
	}
	if c := compareVersions(cmp.Or(a.Version, "1"), cmp.Or(b.Version, "1")); c != 0 {
		return c > 0
	}
	return a.ID < b.ID
}
