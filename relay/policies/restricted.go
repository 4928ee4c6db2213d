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

// RequireAuthForKinds refuses a REQ filter that names a restricted kind on
// a connection that has not authenticated (NIP-42): khatru answers CLOSED
// with the message and sends an AUTH challenge. Filters that name no kind
// pass; their restricted results are hidden by HideRestricted.
func RequireAuthForKinds(kinds []int) func(context.Context, nostr.Filter) (bool, string) {
	return func(ctx context.Context, filter nostr.Filter) (reject bool, msg string) {
		k, named := namesRestricted(kinds, filter)
		if !named || khatru.GetAuthed(ctx) != "" {
			return false, ""
		}
		return true, fmt.Sprintf("auth-required: kind %d is served only to its author and the pubkeys it names", k)
	}
}

// HideRestricted wraps a QueryEvents hook so that a websocket client gets
// only the restricted events ReadableBy allows its authenticated key.
// Queries without a connection, and khatru's internal ones, are passed
// through untouched. The results are filtered as they come, by a
// goroutine (hide) that ends with the query's channel: the relay's store
// streams large answers, and collecting them here would hold the whole
// answer at once.
func HideRestricted(kinds []int, query func(context.Context, nostr.Filter) (chan *nostr.Event, error)) func(context.Context, nostr.Filter) (chan *nostr.Event, error) {
	return func(ctx context.Context, filter nostr.Filter) (chan *nostr.Event, error) {
		ch, err := query(ctx, filter)
		ws := khatru.GetConnection(ctx)
		if err != nil || ch == nil || ws == nil || khatru.IsInternalCall(ctx) || !mayMatchRestricted(kinds, filter) {
			return ch, err
		}
		out := make(chan *nostr.Event)
		go hide(ctx, kinds, khatru.GetAuthed(ctx), ch, out)
		return out, nil
	}
}

// hide passes on the events of ch that authed may read, one at a time (a
// streamed answer stays streamed: nothing is collected); it ends when ch
// is closed, which a query does when it ends or ctx ends.
func hide(ctx context.Context, kinds []int, authed string, ch <-chan *nostr.Event, out chan<- *nostr.Event) {
	defer close(out)
	for evt := range ch {
		if !ReadableBy(kinds, evt, authed) {
			continue
		}
		select {
		case out <- evt:
		case <-ctx.Done(): // the query ends too: ch is drained, then closed
		}
	}
}

// PreventRestrictedBroadcast keeps live restricted events from listeners
// whose connection may not read them (also those that subscribed with
// "limit": 0, which khatru lets past the REQ filter checks).
func PreventRestrictedBroadcast(kinds []int) func(*khatru.WebSocket, *nostr.Event) bool {
	return func(ws *khatru.WebSocket, evt *nostr.Event) (prevent bool) {
		return !ReadableBy(kinds, evt, ws.AuthedPublicKey)
	}
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
