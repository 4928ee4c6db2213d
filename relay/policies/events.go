package policies

import (
	"context"
	"fmt"
	"time"

	"github.com/agentnode/agentnode/events"
	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip40"
)

// ValidateAgentEvents refuses malformed NIP-AE and project events with
// `invalid: <the validator's reason>`. Kinds the events package does not
// know pass untouched.
func ValidateAgentEvents() func(context.Context, *nostr.Event) (bool, string) {
	return func(_ context.Context, evt *nostr.Event) (reject bool, msg string) {
		if err := events.Validate(evt); err != nil {
			return true, "invalid: " + err.Error()
		}
		return false, ""
	}
}

// RejectFarFuture refuses events dated more than skew ahead of now.
func RejectFarFuture(skew time.Duration, now func() nostr.Timestamp) func(context.Context, *nostr.Event) (bool, string) {
	return func(_ context.Context, evt *nostr.Event) (reject bool, msg string) {
		if evt.CreatedAt > now()+nostr.Timestamp(skew.Seconds()) {
			return true, fmt.Sprintf("invalid: created_at is more than %s in the future", skew)
		}
		return false, ""
	}
}

// RejectExpired refuses events whose NIP-40 expiration has passed or whose
// expiration tag is not a unix timestamp.
func RejectExpired(now func() nostr.Timestamp) func(context.Context, *nostr.Event) (bool, string) {
	return func(_ context.Context, evt *nostr.Event) (reject bool, msg string) {
		tag := evt.Tags.Find("expiration")
		if tag == nil {
			return false, ""
		}
		exp := nip40.GetExpiration(evt.Tags)
		if exp < 0 {
			return true, "invalid: expiration tag is not a unix timestamp"
		}
		if exp <= now() {
			return true, "invalid: event has already expired"
		}
		return false, ""
	}
}
