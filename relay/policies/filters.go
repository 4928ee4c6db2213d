package policies

import (
	"context"

	"github.com/nbd-wtf/go-nostr"
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

// hllGuardKey is a tag key no event carries. A nil value makes
// filter.Matches ignore it; StripHLLGuard removes it before any query.
const hllGuardKey = "\x00agentnode-hll-guard"

// GuardHLLOffset defuses a crash in go-nostr's NIP-45 HyperLogLog offset
// computation, which khatru runs on every COUNT before any hook: a kind 3
// filter with a "#p" value (or kind 7 with "#e") shorter than 33 characters
// slices out of range and takes the whole process down. For such filters it
// adds a nil-valued guard tag, which makes the filter ineligible for HLL;
// the count is then computed normally. It mutates filter.Tags in place,
// because that map is the one khatru goes on to use.
func GuardHLLOffset(filter nostr.Filter) {
	if len(filter.Tags) != 1 || len(filter.Kinds) != 1 {
		return
	}
	for _, values := range filter.Tags {
		for _, v := range values {
			if len(v) < 33 {
				filter.Tags[hllGuardKey] = nil
				return
			}
		}
	}
}

// StripHLLGuard removes the guard tag added by GuardHLLOffset.
func StripHLLGuard(filter *nostr.Filter) {
	if _, ok := filter.Tags[hllGuardKey]; ok {
		tags := make(nostr.TagMap, len(filter.Tags))
		for k, v := range filter.Tags {
			if k != hllGuardKey {
				tags[k] = v
			}
		}
		filter.Tags = tags
	}
}
