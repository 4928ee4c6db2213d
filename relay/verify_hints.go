package relay

import (
	"context"
	"strings"

	"github.com/agentnode/agentnode/events"
)

// maxRequestHints bounds the relay hints one request passes on.
const maxRequestHints = 3

// hintsKey is the context key of WithHints.
type hintsKey struct{}

// WithHints returns ctx carrying relays where the subject of a request is
// said to live (an nprofile's relays): a SourceQuerier that looks up what
// the store lacks asks them too (agentd/lookup). At most 3 ws:// or wss://
// URLs are kept.
func WithHints(ctx context.Context, relays []string) context.Context {
	var keep []string
	for _, u := range relays {
		if len(keep) < maxRequestHints && len(u) <= 256 && (strings.HasPrefix(u, "ws://") || strings.HasPrefix(u, "wss://")) {
			keep = append(keep, u)
		}
	}
	if len(keep) == 0 {
		return ctx
	}
	return context.WithValue(ctx, hintsKey{}, keep)
}

// Hints are the relays WithHints put in ctx.
func Hints(ctx context.Context) []string {
	h, _ := ctx.Value(hintsKey{}).([]string)
	return h
}

// withProfileHints is ctx with the relays of ref when it is an nprofile.
func withProfileHints(ctx context.Context, ref string) context.Context {
	if !strings.HasPrefix(strings.TrimPrefix(strings.TrimSpace(ref), "nostr:"), "nprofile1") {
		return ctx
	}
	if _, relays, err := events.ParsePubKeyHints(ref); err == nil && len(relays) > 0 {
		return WithHints(ctx, relays)
	}
	return ctx
}
