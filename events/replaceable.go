package events

import "github.com/nbd-wtf/go-nostr"

// Supersedes reports whether a supersedes b as the version of a replaceable
// or addressable event to keep (NIP-01): the later created_at wins and, on a
// tie, the lower id.
func Supersedes(a, b *nostr.Event) bool {
	return a.CreatedAt > b.CreatedAt || (a.CreatedAt == b.CreatedAt && a.ID < b.ID)
}
