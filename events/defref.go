package events

import (
	"fmt"
	"strings"
)

// DefinitionRef names a kind-4199 definition: one version by event id,
// or the latest version of Author's definition with Slug (its "d"; the
// title, for definitions of the original shape).
type DefinitionRef struct {
	ID     string // 64-hex event id; "" when Author and Slug name it
	Author string // 64-hex pubkey
	Slug   string
	Relays []string // where an nevent or naddr says it lives (lookups)
}

// String is the id, or author:slug.
func (r DefinitionRef) String() string {
	if r.ID != "" {
		return r.ID
	}
	return r.Author + ":" + r.Slug
}

// ParseDefinitionRef is the one parser of a definition reference. It
// accepts an nevent, note or 64-hex event id (one version); a kind-4199
// naddr; or author:slug with the author as an npub, an nprofile or 64
// hex (the latest version). Any form may have surrounding space and the
// ids a "nostr:" prefix. An error wraps ErrBadRef and says which forms
// are accepted; it does no I/O.
func ParseDefinitionRef(s string) (DefinitionRef, error) {
	if left, slug, ok := strings.Cut(strings.TrimSpace(s), ":"); ok && slug != "" {
		if author, err := ParsePubKey(left); err == nil {
			return DefinitionRef{Author: author, Slug: slug}, nil
		}
	}
	ref, err := ParseRef(s)
	switch {
	case err != nil:
		return DefinitionRef{}, fmt.Errorf("definition: %w (or npub:slug)", err)
	case ref.ID != "":
		return DefinitionRef{ID: ref.ID, Author: ref.Author, Relays: ref.Relays}, nil
	case ref.Kind != KindDefinition || ref.Identifier == "":
		return DefinitionRef{}, fmt.Errorf("definition: naddr of kind %d: want a kind-%d naddr with an identifier: %w", ref.Kind, KindDefinition, ErrBadRef)
	}
	return DefinitionRef{Author: ref.Author, Slug: ref.Identifier, Relays: ref.Relays}, nil
}
