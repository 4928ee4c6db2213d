package policies

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/relay/internal/khatru"
)

// Budget bounds what one connection may ask for in a REQ or COUNT.
// A zero or negative field is no bound.
type Budget struct {
	MaxFilters     int // filters in one REQ
	MaxValues      int // ids, authors, kinds, or values of one tag, in one filter
	MaxSearchWords int // words of a NIP-50 search
	PerSecond      int // sustained REQ/COUNT messages per connection
	Burst          int // burst of REQ/COUNT messages per connection
}

// RequestBudget refuses a REQ or COUNT that asks for more than b allows,
// before any of its filters is queried or subscribed: "restricted:" for a
// request that is too large, "rate-limited:" for a connection sending
// them too fast. It is a khatru RejectRequest hook.
func RequestBudget(b Budget, now func() time.Time) func(context.Context, nostr.Filters) (bool, string) {
	var rate *buckets
	if b.PerSecond > 0 {
		rate = &buckets{rate: float64(b.PerSecond), burst: float64(max(b.Burst, 1)), now: now, m: map[string]*bucket{}}
	}
	return func(ctx context.Context, filters nostr.Filters) (reject bool, msg string) {
		if rate != nil {
			if ws := khatru.GetConnection(ctx); ws != nil && !rate.take(fmt.Sprintf("%p", ws)) {
				return true, fmt.Sprintf("rate-limited: more than %d requests per second on this connection", b.PerSecond)
			}
		}
		if b.MaxFilters > 0 && len(filters) > b.MaxFilters {
			return true, fmt.Sprintf("restricted: %d filters in one request (max %d)", len(filters), b.MaxFilters)
		}
		for _, f := range filters {
			if msg := b.checkFilter(f); msg != "" {
				return true, msg
			}
		}
		return false, ""
	}
}

// checkFilter names the first list of f over budget.
func (b Budget) checkFilter(f nostr.Filter) string {
	over := func(what string, n int) string {
		if b.MaxValues > 0 && n > b.MaxValues {
			return fmt.Sprintf("restricted: %d %s in one filter (max %d)", n, what, b.MaxValues)
		}
		return ""
	}
	if msg := over("ids", len(f.IDs)); msg != "" {
		return msg
	}
	if msg := over("authors", len(f.Authors)); msg != "" {
		return msg
	}
	if msg := over("kinds", len(f.Kinds)); msg != "" {
		return msg
	}
	for key, values := range f.Tags {
		if msg := over(`values of tag "#`+key+`"`, len(values)); msg != "" {
			return msg
		}
	}
	if n := len(strings.Fields(f.Search)); b.MaxSearchWords > 0 && n > b.MaxSearchWords {
		return fmt.Sprintf("restricted: %d words in one search (max %d)", n, b.MaxSearchWords)
	}
	return ""
}
