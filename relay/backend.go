package relay

import (
	"context"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip45/hyperloglog"
)

// backend is the relay's storage: the seam between khatru's hooks and an
// event store. Two implement it: store (LMDB + bluge, the embedded
// default) and pgBackend (PostgreSQL, relay/pgstore, for several
// instances on one database).
//
// Contract, for both:
//   - save, replace and delete go through one group-commit writer: they
//     return once the op's transaction has committed (or failed), with
//     what khatru's hooks expect (hookResult): nil for a stored,
//     duplicate or superseded event (the event is announced by the
//     backend, never by khatru: khatru.Relay.StoreAnnounces), errDeleted for an event a stored
//     NIP-09 deletion covers, a NIP-01 prefixed error otherwise;
//   - every stored event is passed to announce (startIngest) exactly once,
//     in commit order, before the save that stored it returns;
//   - query answers newest first (search: the backend's own order), never
//     an expired (NIP-40) event; count is capped at Limits.MaxCount;
//   - every method is safe for concurrent use; after close began they
//     return ErrClosed.
type backend interface {
	save(ctx context.Context, evt *nostr.Event) error
	replace(ctx context.Context, evt *nostr.Event) error
	delete(ctx context.Context, evt *nostr.Event) error
	query(ctx context.Context, filter nostr.Filter) (chan *nostr.Event, error)
	querySync(ctx context.Context, filter nostr.Filter) ([]*nostr.Event, error)
	count(ctx context.Context, filter nostr.Filter) (int64, error)
	countWithHLL(ctx context.Context, filter nostr.Filter, offset int) (int64, *hyperloglog.HyperLogLog, error)
	// startIngest starts the writer (and, for PostgreSQL, the listener);
	// announce receives every stored event as described above, remote the
	// ephemeral events other instances accepted (never for LMDB).
	startIngest(announce, remote func(*nostr.Event)) error
	// shareEphemeral hands an accepted ephemeral event to the other
	// instances (a no-op for LMDB: there are none).
	shareEphemeral(ctx context.Context, evt *nostr.Event)
	stats() ingestStats
	// readiness is nil when the store can take writes and answer reads now,
	// else why not (ready.go).
	readiness(ctx context.Context) error
	close() error
}

var (
	_ backend = (*store)(nil)
	_ backend = (*pgBackend)(nil)
)

// ingestStats are a writer's counters (Relay.Stats).
type ingestStats struct {
	batches, ops, commitNanos int64
}
