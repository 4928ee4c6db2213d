package policies

import (
	"context"

	"github.com/nbd-wtf/go-nostr"
)

// Querier reads stored events. The relay's store satisfies it.
type Querier interface {
	QuerySync(ctx context.Context, filter nostr.Filter) ([]*nostr.Event, error)
}
