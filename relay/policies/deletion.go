package policies

import (
	"context"
	"fmt"

	"github.com/nbd-wtf/go-nostr"
)

// Querier reads stored events. The relay's store satisfies it.
type Querier interface {
	QuerySync(ctx context.Context, filter nostr.Filter) ([]*nostr.Event, error)
}

// RejectDeleted keeps NIP-09 deletions in force: an event whose author has
// published a kind 5 naming its id, or naming its address at or after its
// created_at, is refused with `blocked: this event has been deleted`.
//
// khatru's own "already deleted?" check queries the tag key "#e" and so
// never matches (DESIGN §4 defect 4); this hook replaces it.
func RejectDeleted(q Querier) func(context.Context, *nostr.Event) (bool, string) {
	return func(ctx context.Context, evt *nostr.Event) (reject bool, msg string) {
		if evt.Kind == 5 {
			return false, ""
		}
		deleted, err := isDeleted(ctx, q, evt)
		if err != nil {
			return true, "error: could not check deletions"
		}
		if deleted {
			return true, "blocked: this event has been deleted"
		}
		return false, ""
	}
}

func isDeleted(ctx context.Context, q Querier, evt *nostr.Event) (bool, error) {
	byID := nostr.Filter{Kinds: []int{5}, Authors: []string{evt.PubKey}, Tags: nostr.TagMap{"e": {evt.ID}}, Limit: 1}
	found, err := q.QuerySync(ctx, byID)
	if err != nil || len(found) > 0 {
		return len(found) > 0, err
	}
	if !nostr.IsReplaceableKind(evt.Kind) && !nostr.IsAddressableKind(evt.Kind) {
		return false, nil
	}
	addr := fmt.Sprintf("%d:%s:%s", evt.Kind, evt.PubKey, evt.Tags.GetD())
	since := evt.CreatedAt
	byAddr := nostr.Filter{Kinds: []int{5}, Authors: []string{evt.PubKey}, Tags: nostr.TagMap{"a": {addr}}, Since: &since, Limit: 1}
	found, err = q.QuerySync(ctx, byAddr)
	return len(found) > 0, err
}
