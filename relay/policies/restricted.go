package policies

import (
	"context"
	"fmt"
	"slices"

	"github.com/agentnode/agentnode/relay/internal/khatru"
	"github.com/nbd-wtf/go-nostr"
)

// The restricted-read rule (NIP-42). Some kinds carry data addressed to
// particular readers: ASM op envelopes (4290), whose private and shared
// batches go one event per reader, and NIP-59 gift wraps (1059). An event
// of such a kind is served only to its author and to the pubkeys it names
// in "p" tags; one that names nobody is public. Everything else is served
// to anyone as before.
//
// The hooks below enforce the rule on every path a websocket client reads
// by: REQ filters, stored results, live broadcasts and COUNT. In-process
// reads (Relay.QuerySync, khatru's own deletion and expiration queries)
// carry no connection and are trusted: they are the node itself.

// ReadableBy reports whether pubkey ("" = not authenticated) may read evt
// when kinds are restricted.
func ReadableBy(kinds []int, evt *nostr.Event, pubkey string) bool {
	if !slices.Contains(kinds, evt.Kind) {
		return true
	}
	named := false
	for _, tag := range evt.Tags {
		if len(tag) >= 2 && tag[0] == "p" {
			if pubkey != "" && tag[1] == pubkey {
				return true
			}
			named = true
		}
	}
	return !named || (pubkey != "" && evt.PubKey == pubkey)
}

// namesRestricted reports whether filter asks for a restricted kind by name.
func namesRestricted(kinds []int, filter nostr.Filter) (int, bool) {
	for _, k := range filter.Kinds {
		if slices.Contains(kinds, k) {
			return k, true
		}
	}
	return 0, false
}

// mayMatchRestricted reports whether filter can match a restricted kind
// (it names one, or names no kinds at all).
func mayMatchRestricted(kinds []int, filter nostr.Filter) bool {
	_, named := namesRestricted(kinds, filter)
	return named || len(filter.Kinds) == 0
}

// RestrictCount answers a COUNT that names a restricted kind only when the
// connection has authenticated and the filter is confined to its own key
// ("authors" or "#p" holding exactly that key), so that a count never
// reveals how many events others exchange. COUNTs that name no kind are
// answered over every kind (a number, no content).
func RestrictCount(kinds []int) func(context.Context, nostr.Filter) (bool, string) {
	return func(ctx context.Context, filter nostr.Filter) (reject bool, msg string) {
		k, named := namesRestricted(kinds, filter)
		if !named {
			return false, ""
		}
		authed := khatru.GetAuthed(ctx)
		switch {
		case authed == "":
			return true, fmt.Sprintf("auth-required: kind %d is counted only for authenticated readers", k)
		case onlyKey(filter.Authors, authed) || onlyKey(filter.Tags["p"], authed):
			return false, ""
		}
		return true, fmt.Sprintf("restricted: a count of kind %d must be confined to your own key (authors or #p)", k)
	}
}

func onlyKey(values []string, key string) bool {
	return len(values) > 0 && !slices.ContainsFunc(values, func(v string) bool { return v != key })
}
