package relay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip40"

	"github.com/agentnode/agentnode/relay/internal/lmdbw"
)

// ErrClosed is returned by every store operation after Close has begun.
var ErrClosed = errors.New("relay: closed")

// store is the relay's storage: LMDB holds the events, the search index
// holds the searchable text of agent events. Every operation registers
// itself so that close can drain in-flight work before the LMDB environment
// goes away.
type store struct {
	search *searchIndex
	ingest *ingester     // the single writer: every save, replace and delete
	reader *lmdbw.Writer // the LMDB store: the ingester writes through it, queries read it (read.go)
	limits Limits
	budget *queryBudget // the memory all reads hold (querybudget.go)
	log    *slog.Logger
	lock   *dirLock // the data directory's (lock.go)

	mu       sync.RWMutex
	closed   bool
	inflight sync.WaitGroup
}

func openStore(ctx context.Context, dataDir string, limits Limits, log *slog.Logger) (*store, error) {
	lock, err := lockDataDir(dataDir)
	if err != nil {
		return nil, err
	}
	s, err := openLocked(ctx, dataDir, limits, log)
	if err != nil {
		lock.release()
		return nil, err
	}
	s.lock = lock
	return s, nil
}

// openLocked opens the stores of a locked data directory.
func openLocked(ctx context.Context, dataDir string, limits Limits, log *slog.Logger) (*store, error) {
	// lmdbw opens the environment without a writable map, where a full
	// disk is a SIGBUS (docs/RELAY.md, Disk full).
	w, err := lmdbw.Open(filepath.Join(dataDir, "events"), 0)
	if err != nil {
		return nil, fmt.Errorf("open event store: %w", err)
	}
	search, clean, err := openSearchIndex(filepath.Join(dataDir, "search"), log)
	if err != nil {
		w.Close()
		return nil, err
	}
	s := &store{search: search, ingest: newIngester(w, search, log), reader: w, limits: limits,
		budget: newQueryBudget(limits.QueryMemory), log: log}
	if !clean {
		if err := s.rebuildSearch(ctx, log); err != nil {
			s.close()
			return nil, err
		}
	}
	return s, nil
}

// rebuildSearch re-indexes every searchable event in LMDB: after a crash
// the asynchronous index may lack the last events (re-indexing is an
// idempotent update; entries of since-deleted events are harmless, as
// search results are read back from LMDB). One walk of the kind index,
// each event decoded alone and queued: it holds no page of events.
func (s *store) rebuildSearch(ctx context.Context, log *slog.Logger) error {
	n, failed := 0, error(nil)
	f := nostr.Filter{Kinds: searchKinds}
	err := s.reader.Read(ctx, s.reader.Plan(f), 0, math.MaxUint32, func(_ uint32, raw []byte) bool {
		evt, err := lmdbw.Decode(raw)
		if err != nil {
			failed = err
			return false
		}
		s.search.index(evt)
		n++
		return true
	})
	if err = errors.Join(err, failed); err != nil {
		return fmt.Errorf("rebuild search index: %w", err)
	}
	if err := s.search.flush(ctx); err != nil {
		// A full disk must not keep the relay from starting: searches miss
		// these events until the index is rebuilt at the next open.
		log.Warn("search index rebuild not written", "err", err)
		return ctx.Err()
	}
	if n > 0 {
		log.Info("search index rebuilt from the event store", "events", n)
	}
	return nil
}

// enter registers an operation; the returned func must be called when it ends.
func (s *store) enter() (done func(), err error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrClosed
	}
	s.inflight.Add(1)
	return s.inflight.Done, nil
}

// close waits for in-flight operations, then closes the index and the events.
func (s *store) close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.inflight.Wait()
	if s.ingest.started {
		s.ingest.close()
	}
	err := s.search.close()
	// A drained query's read transaction may still be ending (lmdbw.WaitReaders):
	// closing LMDB under it crashes the process, so a stuck one leaves it open.
	if ok, werr := s.reader.WaitReaders(5 * time.Second); !ok {
		return errors.Join(err, werr, errors.New("relay: close: LMDB read transactions still open; events left open"))
	}
	s.reader.Close()
	s.lock.release()
	return err
}

// startIngest starts the writer; announce is called with every stored
// event in commit order (see ingester).
func (s *store) startIngest(announce, _ func(*nostr.Event)) error {
	s.ingest.announce = announce
	s.ingest.started = true
	s.ingest.start()
	return nil
}

// shareEphemeral does nothing: an LMDB relay is one instance.
func (s *store) shareEphemeral(context.Context, *nostr.Event) {}

// stats are the writer's counters.
func (s *store) stats() ingestStats {
	g := s.ingest
	return ingestStats{batches: g.batches.Load(), ops: g.batchOps.Load(), commitNanos: g.commitNanos.Load()}
}

// save stores a regular event (a kind 5 deletion also removes the
// author's targets) and indexes its searchable text, in the next batch.
func (s *store) save(ctx context.Context, evt *nostr.Event) error {
	return s.write(ctx, lmdbw.Save, evt)
}

// replace stores a replaceable or addressable event, dropping older
// versions in the same LMDB write transaction.
func (s *store) replace(ctx context.Context, evt *nostr.Event) error {
	return s.write(ctx, lmdbw.Replace, evt)
}

// delete removes an event from the store and the index.
func (s *store) delete(ctx context.Context, evt *nostr.Event) error {
	return s.write(ctx, lmdbw.Delete, evt)
}

// write submits one op to the writer and returns what khatru's hooks
// expect (hookResult); internal failures are logged, peers get a short
// stable reason.
func (s *store) write(ctx context.Context, action lmdbw.Action, evt *nostr.Event) error {
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	op, err := s.ingest.submit(ctx, action, evt)
	if err != nil {
		return errorf("error", "event not stored: %v", err)
	}
	if op.Outcome == lmdbw.Failed {
		return failedResult(op.Err, evt, s.log)
	}
	return hookResult(op)
}

// failedResult is the NIP-01 answer to an op the writer could not store.
// A full disk or map is logged once per batch by the ingester, not here.
func failedResult(err error, evt *nostr.Event, log *slog.Logger) error {
	switch {
	case errors.Is(err, lmdbw.ErrUnstorable):
		return errorf("invalid", "%v", err)
	case errors.Is(err, lmdbw.ErrDiskFull):
		return errorf("error", "disk full, event not stored")
	case errors.Is(err, lmdbw.ErrMapFull):
		return errorf("error", "store full, event not stored")
	default:
		log.Error("event not stored", "id", evt.ID, "err", err)
		return errorf("error", "event not stored")
	}
}

// removeEvent deletes evt from both stores at once, beside the ingester
// (LMDB serialises the write transactions); the caller has entered.
func (s *store) removeEvent(ctx context.Context, evt *nostr.Event) error {
	op := &lmdbw.Op{Action: lmdbw.Delete, Event: evt}
	if err := s.reader.Commit([]*lmdbw.Op{op}); err != nil {
		return err
	}
	s.search.remove(evt)
	return nil
}

// query answers filter, newest first.
//
// A search filter is answered from the search index, ranked
// (collectSearch), as a channel that is already full: a search's answer is
// bounded by its candidate window and Limits.MaxQueryBytes. Every other
// filter is streamed (stream.go) by the store's own LMDB reader (read.go),
// which decodes each stored record straight into the JSON of its EVENT
// frame and hands that JSON to khatru (khatru.SetEncoded) along with the
// event: chunks of at most Limits.MaxQueryBytes, so the whole answer
// arrives, paced by its consumer. Every result is checked with
// filter.Matches. NIP-40-expired events are never served: they are purged
// when met. A filter without a limit gets Limits.MaxLimit.
func (s *store) query(ctx context.Context, filter nostr.Filter) (chan *nostr.Event, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	if filter.Limit <= 0 {
		filter.Limit = s.limits.MaxLimit
	}
	if hasHashTagKey(filter) {
		done()
		return closedChan(), nil
	}
	filter = dedupeFilter(filter)
	if filter.Search == "" {
		return streamQuery(ctx, filter, s.readChunk(), done)
	}
	defer done()
	hits, expired, err := s.collectSearch(ctx, filter)
	if err != nil {
		return nil, err
	}
	for _, evt := range expired {
		s.removeEvent(context.WithoutCancel(ctx), evt)
	}
	return filled(ctx, hits), nil
}

// querySync collects query's results; a streamed answer cut short by an
// error (the budget's errBusy) returns that error.
func (s *store) querySync(ctx context.Context, filter nostr.Filter) ([]*nostr.Event, error) {
	return collect(ctx, func(ctx context.Context) (chan *nostr.Event, error) { return s.query(ctx, filter) })
}

// isExpired reports whether evt carries a NIP-40 expiration at or before now.
func isExpired(evt *nostr.Event, now nostr.Timestamp) bool {
	exp := nip40.GetExpiration(evt.Tags)
	return exp >= 0 && exp <= now
}

// dedupeFilter removes repeated values from a filter's lists: the LMDB query
// planner runs one scan per value, so a repeated kind, author, id or tag
// value would return every match twice (found by the differential test).
func dedupeFilter(f nostr.Filter) nostr.Filter {
	f.IDs = uniq(f.IDs)
	f.Authors = uniq(f.Authors)
	f.Kinds = uniq(f.Kinds)
	if len(f.Tags) > 0 {
		tags := make(nostr.TagMap, len(f.Tags))
		for k, v := range f.Tags {
			tags[k] = uniq(v)
		}
		f.Tags = tags
	}
	return f
}

func uniq[T comparable](list []T) []T {
	if len(list) < 2 {
		return list
	}
	seen := make(map[T]struct{}, len(list))
	out := make([]T, 0, len(list))
	for _, v := range list {
		if _, ok := seen[v]; !ok {
			seen[v] = struct{}{}
			out = append(out, v)
		}
	}
	return out
}

// hasHashTagKey reports a filter on a tag named "#x". No event carries such
// a tag: these filters come from khatru's own "already deleted?" checks,
// which spell the key "#e"/"#a" and so can never match (DESIGN §4 defect 4,
// replaced by the writer's in-transaction check, lmdbw deletedBy).
// Answering them from the index would scan every kind 5 event on each
// publish.
func hasHashTagKey(f nostr.Filter) bool {
	for k := range f.Tags {
		if strings.HasPrefix(k, "#") {
			return true
		}
	}
	return false
}

func closedChan() chan *nostr.Event {
	ch := make(chan *nostr.Event)
	close(ch)
	return ch
}
