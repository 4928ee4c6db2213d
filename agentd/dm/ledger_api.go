package dm

import (
	"context"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// Ledger is the service's durable memory of processed gift wraps (see
// ledger for the two steps of a reply): a JSON file by default
// (Config.StatePath), or a database several instances share
// (agentd/agentpg.Ledger, `serve --postgres`). Has runs in the relay's
// store hook: it must answer from memory, without I/O. Begin and Mark
// return once the change is durable; they take the caller's ctx, which
// cancels a database's query (the file ledger's local write is not
// interrupted). Implementations are safe for concurrent use.
type Ledger interface {
	// Has reports whether wrap id was processed or has a pending reply.
	Has(id string) bool
	// Since is where a catch-up starts: the catch-up window before the
	// last processed wrap's time, or before now when there is none.
	Since(now time.Time) nostr.Timestamp
	// Pending returns the replies begun and not marked done.
	Pending() map[string]PendingReply
	// Begin records reply (signed, final) as pending for wrap; a wrap
	// already marked done wraps ErrAnswered (in a ledger shared by
	// instances, also one another instance has begun).
	Begin(ctx context.Context, wrap *nostr.Event, reply []*nostr.Event) error
	// Mark records wrap id (created at) as processed at now and drops its
	// pending reply; ids older than the window may be forgotten.
	Mark(ctx context.Context, id string, at nostr.Timestamp, now time.Time) error
}

var _ Ledger = (*ledger)(nil)
