package policies

import (
	"context"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip45"
)

// CapLimit gives a REQ without a limit the default one and caps larger
// limits at max, so no query ever asks the store for an unbounded result.
func CapLimit(def, max int) func(context.Context, *nostr.Filter) {
	return func(_ context.Context, filter *nostr.Filter) {
		if filter.Limit <= 0 || filter.Limit > max {
			if filter.Limit <= 0 {
				filter.Limit = def
			} else {
				filter.Limit = max
			}
		}
	}
}

// HyperLogLogOffset is the relay's khatru.Relay.HyperLogLogOffset: go-nostr's
// NIP-45 offset, except that a filter with a tag value shorter than 33
// characters gets none (-1). go-nostr versions before v0.52 sliced such a
// value out of range on every COUNT before any hook ran (a kind 3 filter
// with a short "#p", or kind 7 with a short "#e"), which took the whole
// process down; the count is then computed without a HyperLogLog.
func HyperLogLogOffset(filter nostr.Filter) int {
	if len(filter.Tags) != 1 || len(filter.Kinds) != 1 {
		return nip45.HyperLogLogEventPubkeyOffsetForFilter(filter)
	}
	for _, values := range filter.Tags {
		for _, v := range values {
			if len(v) < 33 {
				return -1
			}
		}
	}
	return nip45.HyperLogLogEventPubkeyOffsetForFilter(filter)
}
