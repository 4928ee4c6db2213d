package relay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip45/hyperloglog"

	"github.com/agentnode/agentnode/relay/pgstore"
)

// pgPurgeEvery is how often an instance deletes the NIP-40-expired events
// (queries hide them meanwhile; every instance purges, idempotently).
const pgPurgeEvery = time.Minute

// pgOpenTimeout bounds connecting to and migrating the database at Open.
const pgOpenTimeout = 15 * time.Second

// pgAnnounceWait bounds how long a committed batch waits for the Listener
// to announce it before its publishers are answered anyway (the events
// are durable; they are announced when the Listener catches up).
const pgAnnounceWait = 5 * time.Second

// pgBackend stores events in PostgreSQL (relay/pgstore), for several
// instances on one database.
//
// Writes: one writer goroutine commits whatever has queued as one
// pgstore.SaveBatchHead (group commit, pipelined statements, NIP-09 in the
// transaction). Announcing: only the pgstore Listener announces (OnStored,
// live broadcast), for the commits of every instance, in commit order,
// once each. A batch's publishers are answered when the Listener has
// passed the batch's commit counter, so that, as with LMDB, an event is
// announced before its OK (bounded by pgAnnounceWait).
type pgBackend struct {
	pg     *pgstore.Store
	limits Limits
	budget *queryBudget // the memory all reads hold (querybudget.go)
	log    *slog.Logger
	lock   *dirLock // the data directory's, when there is one

	in       chan *pgWrite
	out      chan pgCommit
	stop     chan struct{}
	wg       sync.WaitGroup
	announce func(*nostr.Event)
	listener *pgstore.Listener
	cancel   context.CancelFunc // the listener's
	lwg      sync.WaitGroup

	posMu     sync.Mutex
	pos       int64         // the Listener's progress (every commit up to it announced)
	moved     chan struct{} // closed and replaced when pos moves
	ready     chan struct{} // closed when the Listener first listens on every channel
	readyOnce sync.Once
	listening listenHealth // the Listener's connection, for readiness (ready.go)

	mu       sync.RWMutex
	closed   bool
	started  bool
	inflight sync.WaitGroup

	batches, ops, commitNanos atomic.Int64

	// reads holds a slot per running query or count: they leave pgReserved
	// of the pool's connections free, so that clients' reads cannot keep
	// the writer (and with it every publisher) waiting for a connection.
	reads chan struct{}
}

// pgReserved is how many pool connections reads leave to the writer and
// to ephemeral notifications.
const pgReserved = 2

// pgWrite is one queued save and the channel that says it is answered.
type pgWrite struct {
	evt  *nostr.Event
	err  error
	done chan struct{}
}

// pgCommit is a committed (or failed: head 0) batch on its way to release.
type pgCommit struct {
	batch []*pgWrite
	head  int64
	at    time.Time // when it committed: its publishers wait for the announce until at+pgAnnounceWait
}

// openPGLocked is openPG holding DataDir's lock (when there is a DataDir):
// the relay keeps nothing there in Postgres mode, but the rest of the node
// does, and two instances must not share it.
func openPGLocked(ctx context.Context, cfg Config) (*pgBackend, error) {
	var lock *dirLock
	if cfg.DataDir != "" {
		l, err := lockDataDir(cfg.DataDir)
		if err != nil {
			return nil, err
		}
		lock = l
	}
	b, err := openPG(ctx, cfg.Postgres, cfg.Limits, cfg.Logger)
	if err != nil {
		lock.release()
		return nil, err
	}
	b.lock = lock
	return b, nil
}

// openPG connects to the database at url and migrates it; a database that
// cannot be reached, or whose schema is newer than this binary, is an error.
func openPG(ctx context.Context, url string, limits Limits, log *slog.Logger) (*pgBackend, error) {
	ctx, cancel := context.WithTimeout(ctx, pgOpenTimeout)
	defer cancel()
	pg, err := pgstore.Open(ctx, url)
	if err != nil {
		if errors.Is(err, pgstore.ErrSchemaTooNew) {
			return nil, fmt.Errorf("relay: postgres: %w (upgrade this binary)", err)
		}
		return nil, fmt.Errorf("relay: postgres unreachable or unusable: %w", err)
	}
	pg.MaxLimit = limits.MaxCount + 1 // the relay chooses every limit itself
	pg.SearchText = SearchText        // the same searchable text as the LMDB mode's index
	return &pgBackend{pg: pg, limits: limits, budget: newQueryBudget(limits.QueryMemory), log: log, in: make(chan *pgWrite, maxIngestBatch),
		out: make(chan pgCommit, 64), stop: make(chan struct{}), moved: make(chan struct{}), ready: make(chan struct{}),
		reads: make(chan struct{}, max(1, pg.MaxConns()-pgReserved))}, nil
}

// startIngest starts the Listener from the current commit counter and
// waits until it listens (so that an instance that has opened misses no
// ephemeral event sent after), then starts the writer and the releaser.
func (b *pgBackend) startIngest(announce, remote func(*nostr.Event)) error {
	head, err := b.pg.Head(context.Background())
	if err != nil {
		return fmt.Errorf("relay: postgres: %w", err)
	}
	b.announce, b.pos = announce, head
	l := b.pg.NewListener(func(_ int64, evt *nostr.Event) { b.announce(evt) })
	l.Progress = func(head int64) { b.listening.up(); b.advance(head) }
	l.Ephemeral = remote
	l.Listening = func() { b.listening.up(); b.readyOnce.Do(func() { close(b.ready) }) }
	l.LogError = func(err error) { b.listening.down(err); b.log.Warn("postgres listener", "err", err) }
	b.listener = l
	ctx, cancel := context.WithCancel(context.Background())
	b.cancel = cancel
	b.lwg.Add(1)
	go func() { defer b.lwg.Done(); l.RunAfter(ctx, head) }()
	select {
	case <-b.ready:
	case <-time.After(pgOpenTimeout):
		cancel()
		b.lwg.Wait()
		return fmt.Errorf("relay: postgres: the listener did not connect within %v", pgOpenTimeout)
	}
	b.lwg.Add(1)
	go func() { defer b.lwg.Done(); b.purgeLoop(ctx) }()
	b.wg.Add(2)
	go func() { defer b.wg.Done(); b.writeLoop() }()
	go func() { defer b.wg.Done(); b.releaseLoop() }()
	b.started = true
	return nil
}

// purgeLoop purges expired events every pgPurgeEvery until ctx ends.
func (b *pgBackend) purgeLoop(ctx context.Context) {
	tick := time.NewTicker(pgPurgeEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			b.purge(ctx)
		}
	}
}

// purge deletes the events expired by now and returns how many.
func (b *pgBackend) purge(ctx context.Context) int64 {
	n, err := b.pg.PurgeExpired(ctx, nostr.Now())
	if err != nil && ctx.Err() == nil {
		b.log.Warn("expired events not purged", "err", err)
	}
	return n
}

// shareEphemeral notifies the other instances of an accepted ephemeral
// event (best effort: one too large for a NOTIFY stays local).
func (b *pgBackend) shareEphemeral(ctx context.Context, evt *nostr.Event) {
	if err := b.pg.NotifyEphemeral(ctx, evt); err != nil {
		b.log.Warn("ephemeral event not shared with other instances", "id", evt.ID, "err", err)
	}
}

// advance records the Listener's progress.
func (b *pgBackend) advance(head int64) {
	b.posMu.Lock()
	defer b.posMu.Unlock()
	if head > b.pos {
		b.pos = head
		close(b.moved)
		b.moved = make(chan struct{})
	}
}

// announced waits until the Listener has passed head, or until deadline
// (the commit's time + pgAnnounceWait: a stalled Listener delays each
// batch's answer by that much at most counted from its own commit, not
// once more per queued batch).
func (b *pgBackend) announced(head int64, deadline time.Time) {
	timeout := time.NewTimer(time.Until(deadline))
	defer timeout.Stop()
	for {
		b.posMu.Lock()
		pos, moved := b.pos, b.moved
		b.posMu.Unlock()
		if pos >= head {
			return
		}
		select {
		case <-moved:
		case <-timeout.C:
			b.log.Warn("postgres listener behind: answering publishers before their events are announced", "head", head, "announced", pos)
			return
		}
	}
}

// writeLoop commits batches until stop.
func (b *pgBackend) writeLoop() {
	defer close(b.out)
	for {
		var first *pgWrite
		select {
		case first = <-b.in:
		case <-b.stop:
			return
		}
		b.out <- b.commit(gather(first, b.in))
	}
}

// commit saves one batch in one transaction.
func (b *pgBackend) commit(batch []*pgWrite) pgCommit {
	evts := make([]*nostr.Event, len(batch))
	for i, w := range batch {
		evts[i] = w.evt
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	results, head, err := b.pg.SaveBatchHead(ctx, evts)
	b.batches.Add(1)
	b.ops.Add(int64(len(batch)))
	b.commitNanos.Add(int64(time.Since(start)))
	if err != nil {
		b.log.Error("write batch not committed", "events", len(batch), "err", err)
	}
	for i, w := range batch {
		if err != nil {
			w.err = err
		} else {
			w.err = results[i]
		}
	}
	return pgCommit{batch: batch, head: head, at: time.Now()}
}

// releaseLoop answers each batch's publishers, in commit order, once the
// Listener has announced it.
func (b *pgBackend) releaseLoop() {
	for c := range b.out {
		if c.head > 0 && stores(c.batch) {
			b.announced(c.head, c.at.Add(pgAnnounceWait))
		}
		for _, w := range c.batch {
			close(w.done)
		}
	}
}

// stores reports whether a batch stored anything (else nothing to wait for).
func stores(batch []*pgWrite) bool {
	for _, w := range batch {
		if w.err == nil {
			return true
		}
	}
	return false
}

// read waits for a read slot (reads); release gives it back.
func (b *pgBackend) read(ctx context.Context) (release func(), err error) {
	select {
	case b.reads <- struct{}{}:
		return func() { <-b.reads }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// enter registers an operation; the returned func must be called when it ends.
func (b *pgBackend) enter() (done func(), err error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return nil, ErrClosed
	}
	b.inflight.Add(1)
	return b.inflight.Done, nil
}

func (b *pgBackend) save(ctx context.Context, evt *nostr.Event) error    { return b.write(ctx, evt) }
func (b *pgBackend) replace(ctx context.Context, evt *nostr.Event) error { return b.write(ctx, evt) }

// write queues evt for the writer and waits for its answer (hookResult's
// contract).
func (b *pgBackend) write(ctx context.Context, evt *nostr.Event) error {
	done, err := b.enter()
	if err != nil {
		return err
	}
	defer done()
	w := &pgWrite{evt: evt, done: make(chan struct{})}
	select {
	case b.in <- w:
	case <-ctx.Done():
		return errorf("error", "event not stored: %v", ctx.Err())
	}
	select {
	case <-w.done:
	case <-ctx.Done():
		return errorf("error", "event not stored: %v", ctx.Err())
	}
	return b.result(w.err, evt)
}

// result is what khatru's store hooks expect for a save's outcome.
func (b *pgBackend) result(err error, evt *nostr.Event) error {
	switch {
	case err == nil, errors.Is(err, pgstore.ErrDuplicate), errors.Is(err, pgstore.ErrSuperseded):
		return nil // announced by the Listener, not by khatru (StoreAnnounces)
	case errors.Is(err, pgstore.ErrDeleted):
		return errDeleted
	case errors.Is(err, pgstore.ErrUnstorable):
		return errorf("invalid", "event holds a NUL character or invalid UTF-8")
	}
	b.log.Error("event not stored", "id", evt.ID, "err", err)
	return errorf("error", "event not stored")
}

// delete removes one event (a NIP-09 target, an expired event).
func (b *pgBackend) delete(ctx context.Context, evt *nostr.Event) error {
	done, err := b.enter()
	if err != nil {
		return err
	}
	defer done()
	if _, err := b.pg.Delete(ctx, evt.ID); err != nil {
		b.log.Error("event not deleted", "id", evt.ID, "err", err)
		return errorf("error", "event not deleted")
	}
	return nil
}

// query answers filter, newest first (search included), at most
// filter.Limit events (Limits.MaxLimit when unset), streamed like the
// LMDB store's answers (stream.go): chunks of at most
// Limits.MaxQueryBytes, each read after the last event of the one before
// (pgstore.QueryAfter), so the whole answer arrives.
func (b *pgBackend) query(ctx context.Context, filter nostr.Filter) (chan *nostr.Event, error) {
	done, err := b.enter()
	if err != nil {
		return nil, err
	}
	if filter.Limit <= 0 {
		filter.Limit = b.limits.MaxLimit
	}
	if hasHashTagKey(filter) {
		done()
		return closedChan(), nil
	}
	return streamQuery(ctx, filter, b.readChunk, done)
}

// querySync collects query's results.
func (b *pgBackend) querySync(ctx context.Context, filter nostr.Filter) ([]*nostr.Event, error) {
	return collect(ctx, func(ctx context.Context) (chan *nostr.Event, error) { return b.query(ctx, filter) })
}

// readChunk is pgBackend's chunkReader: one query of PostgreSQL (holding
// one of the read slots), its rows charged as they are read.
func (b *pgBackend) readChunk(ctx context.Context, filter nostr.Filter, after cursor) (chunk, error) {
	release, err := b.read(ctx)
	if err != nil {
		return chunk{}, err
	}
	defer release()
	var from *pgstore.After
	if after.set {
		from = &pgstore.After{CreatedAt: after.ts, ID: after.id}
	}
	c := b.budget.newCharge(b.limits.MaxQueryBytes)
	cut := false
	evts, err := b.pg.QueryAfter(ctx, filter, from, func(size int) error {
		if err := c.grow(size); err != errTooMuch {
			return err
		}
		cut = true
		return pgstore.ErrEnough // the newest events, up to the ceiling
	})
	if err != nil {
		c.release()
		if errors.Is(err, errBusy) {
			return chunk{}, errBusy
		}
		if ctx.Err() == nil {
			b.log.Error("query failed", "err", err)
		}
		return chunk{}, errorf("error", "query failed")
	}
	hits := make([]hit, len(evts))
	for i, evt := range evts {
		hits[i] = hit{evt: evt, id: evt.ID}
	}
	return chunk{hits: hits, charge: c, more: cut}, nil
}

func (b *pgBackend) count(ctx context.Context, filter nostr.Filter) (int64, error) {
	n, _, err := b.countWithHLL(ctx, filter, -1)
	return n, err
}

// countWithHLL counts with one count(*) (capped at MaxCount); with
// offset >= 0 the NIP-45 HyperLogLog is built from at most
// maxSearchWindow of the newest matching events.
func (b *pgBackend) countWithHLL(ctx context.Context, filter nostr.Filter, offset int) (int64, *hyperloglog.HyperLogLog, error) {
	done, err := b.enter()
	if err != nil {
		return 0, nil, err
	}
	defer done()
	ctx, cancel := context.WithTimeout(ctx, b.limits.CountTimeout)
	defer cancel()
	release, err := b.read(ctx)
	if err != nil {
		return 0, nil, errorf("error", "count failed")
	}
	defer release()
	filter.LimitZero = false
	n, err := b.pg.Count(ctx, filter)
	if err != nil {
		return 0, nil, errorf("error", "count failed")
	}
	n = min(n, int64(b.limits.MaxCount))
	if offset < 0 {
		return n, nil, nil
	}
	keys, err := b.pg.Pubkeys(ctx, filter, maxSearchWindow)
	if err != nil {
		return 0, nil, errorf("error", "count failed")
	}
	hll := hyperloglog.New(offset)
	for _, pk := range keys {
		hll.Add(pk)
	}
	return n, hll, nil
}

func (b *pgBackend) stats() ingestStats {
	return ingestStats{batches: b.batches.Load(), ops: b.ops.Load(), commitNanos: b.commitNanos.Load()}
}

// close waits for in-flight operations, stops the writer, then the
// Listener, and closes the pool.
func (b *pgBackend) close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.mu.Unlock()
	b.inflight.Wait()
	if b.started {
		close(b.stop)
		b.wg.Wait()
		b.cancel()
		b.lwg.Wait()
	}
	b.pg.Close()
	b.lock.release()
	return nil
}
