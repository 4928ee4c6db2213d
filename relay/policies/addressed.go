package policies

import (
	"context"
	"fmt"
	"slices"

	"github.com/agentnode/agentnode/relay/internal/khatru"
	"github.com/nbd-wtf/go-nostr"
)

// Restricted is the restricted-read rule with its addressed kinds.
//
// Kinds are served only to their author and the pubkeys they name in "p"
// tags, as authenticated with NIP-42 (ReadableBy, restricted.go). Addressed, a subset
// of Kinds, are also served without authentication to a subscription
// that names the recipient: a filter with "#p" gets the events that
// p-tag one of its values. A reader must know whom it asks about; what
// it cannot do without AUTH is harvest them all (a filter without "#p"
// still needs AUTH, and gets only its own). This is how stock Nostr
// clients of gift wraps and ContextVM (MCP over Nostr, kinds 1059, 21059,
// 25910) read their inbox: they subscribe to {"kinds": [...], "#p":
// [own key]} and never authenticate (docs/RELAY.md, "Restricted kinds").
type Restricted struct {
	Kinds     []int
	Addressed []int
}

// addressedRead reports whether evt, of an addressed kind, p-tags one of
// the filter's "#p" values.
func (r Restricted) addressedRead(filter nostr.Filter, evt *nostr.Event) bool {
	if !slices.Contains(r.Addressed, evt.Kind) {
		return false
	}
	want := filter.Tags["p"]
	for _, t := range evt.Tags {
		if len(t) >= 2 && t[0] == "p" && slices.Contains(want, t[1]) {
			return true
		}
	}
	return false
}

// readable reports whether a reader authenticated as authed ("" for
// none) may have evt through filter.
func (r Restricted) readable(filter nostr.Filter, evt *nostr.Event, authed string) bool {
	return ReadableBy(r.Kinds, evt, authed) || r.addressedRead(filter, evt)
}

// RequireAuth refuses, on a connection that has not authenticated, a REQ
// filter that names a restricted kind, unless every restricted kind it
// names is addressed and the filter has "#p" (khatru answers CLOSED and
// sends an AUTH challenge).
func (r Restricted) RequireAuth() func(context.Context, nostr.Filter) (bool, string) {
	return func(ctx context.Context, filter nostr.Filter) (reject bool, msg string) {
		if khatru.GetAuthed(ctx) != "" {
			return false, ""
		}
		addressed := len(filter.Tags["p"]) > 0
		for _, k := range filter.Kinds {
			if slices.Contains(r.Kinds, k) && (!addressed || !slices.Contains(r.Addressed, k)) {
				if slices.Contains(r.Addressed, k) {
					return true, fmt.Sprintf("auth-required: kind %d is served only to its author and the pubkeys it names (or to a filter naming its recipient in #p)", k)
				}
				return true, fmt.Sprintf("auth-required: kind %d is served only to its author and the pubkeys it names", k)
			}
		}
		return false, ""
	}
}

// Hide wraps a QueryEvents hook so that a websocket client gets only the
// restricted events it may read (readable), streamed as the query yields
// them. Queries without a connection,
// and khatru's internal ones, pass untouched.
func (r Restricted) Hide(query func(context.Context, nostr.Filter) (chan *nostr.Event, error)) func(context.Context, nostr.Filter) (chan *nostr.Event, error) {
	return func(ctx context.Context, filter nostr.Filter) (chan *nostr.Event, error) {
		ch, err := query(ctx, filter)
		ws := khatru.GetConnection(ctx)
		if err != nil || ch == nil || ws == nil || khatru.IsInternalCall(ctx) || !mayMatchRestricted(r.Kinds, filter) {
			return ch, err
		}
		authed := khatru.GetAuthed(ctx)
		out := make(chan *nostr.Event)
		go r.hide(ctx, filter, authed, ch, out)
		return out, nil
	}
}

// hide passes on what of ch the client may read, one event at a time, so
// that a large answer streams (paced by its reader) instead of being
// gathered here. It reads ch to its end even when ctx ends, so that the
// query feeding it is never left blocked; it closes out.
func (r Restricted) hide(ctx context.Context, filter nostr.Filter, authed string, ch <-chan *nostr.Event, out chan<- *nostr.Event) {
	defer close(out)
	for evt := range ch {
		if ctx.Err() != nil || !r.readable(filter, evt, authed) {
			continue
		}
		select {
		case out <- evt:
		case <-ctx.Done():
		}
	}
}

// PreventBroadcast keeps a live restricted event from a subscription
// that may not read it (khatru's PreventBroadcastTo).
func (r Restricted) PreventBroadcast() func(*khatru.WebSocket, nostr.Filter, *nostr.Event) bool {
	return func(ws *khatru.WebSocket, filter nostr.Filter, evt *nostr.Event) (prevent bool) {
		return !r.readable(filter, evt, ws.AuthedPublicKey)
	}
}
