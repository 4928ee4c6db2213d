package relay

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/relay/internal/lmdbw"
)

// maxIngestBatch bounds the events of one write transaction.
const maxIngestBatch = 1024

// errDeleted refuses an event that a stored NIP-09 deletion covers.
var errDeleted = errors.New("blocked: this event has been deleted")

// ingester is the relay's single writer (group commit). Callers on many
// goroutines (khatru runs each websocket message on its own goroutine,
// after the id and signature checks and the policies) submit an op and
// wait; the writer takes whatever has queued since its last commit, up
// to maxIngestBatch, and writes it in one LMDB transaction, one fsync. A
// lone event is committed at once; under load, ops queue while the
// previous batch syncs, so batches grow with the load. After the commit the writer
// updates the search index and hands the batch to the announcer, which
// fires OnStored and broadcasts the stored events in commit order, then
// releases the waiters: an OK is sent only for a durable event.
type ingester struct {
	commit func([]*lmdbw.Op) error // the writer's Commit (a test may wrap it)
	search *searchIndex
	in     chan *pendingOp
	out    chan []*pendingOp
	// announce is called (on the announcer goroutine) with each stored
	// event in commit order before its submitter is released.
	announce func(*nostr.Event)

	started bool // set by store.startIngest, before any op
	stop    chan struct{}
	wg      sync.WaitGroup

	log     *slog.Logger
	refused int // ops of the failed commits since the last good one (writer goroutine only)

	// counters for Relay.Stats
	batches, batchOps, commitNanos atomic.Int64
}

// pendingOp is one submitted op and the channel that says it is done.
type pendingOp struct {
	op   lmdbw.Op
	done chan struct{}
}

func newIngester(w *lmdbw.Writer, search *searchIndex, log *slog.Logger) *ingester {
	return &ingester{commit: w.Commit, search: search, in: make(chan *pendingOp, maxIngestBatch),
		out: make(chan []*pendingOp, 64), stop: make(chan struct{}), announce: func(*nostr.Event) {}, log: log}
}

// start runs the writer and the announcer until close.
func (g *ingester) start() {
	g.wg.Add(2)
	go func() { defer g.wg.Done(); g.writeLoop() }()
	go func() { defer g.wg.Done(); g.announceLoop() }()
}

// close stops both goroutines once every submitted op is done; the store
// calls it after its in-flight operations have drained.
func (g *ingester) close() {
	close(g.stop)
	g.wg.Wait()
}

// submit queues op and waits until its batch is committed and announced.
// If ctx ends first the op may still be committed, but is not reported.
func (g *ingester) submit(ctx context.Context, action lmdbw.Action, evt *nostr.Event) (*lmdbw.Op, error) {
	p := &pendingOp{op: lmdbw.Op{Action: action, Event: evt}, done: make(chan struct{})}
	select {
	case g.in <- p:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case <-p.done:
		return &p.op, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// writeLoop commits batches until stop.
func (g *ingester) writeLoop() {
	defer close(g.out)
	for {
		var first *pendingOp
		select {
		case first = <-g.in:
		case <-g.stop:
			return
		}
		batch := gather(first, g.in)
		ops := make([]*lmdbw.Op, len(batch))
		for i, p := range batch {
			ops[i] = &p.op
		}
		start := time.Now()
		err := g.commit(ops)
		g.batches.Add(1)
		g.batchOps.Add(int64(len(ops)))
		g.commitNanos.Add(int64(time.Since(start)))
		g.report(err, len(ops)) // a failed commit marks every op Failed
		g.indexSearch(ops)
		g.out <- batch
	}
}

// report logs the first failed commit of a run of failures (a full disk
// fails every batch until space returns) and the first good commit after
// it. A failed commit leaves nothing behind: the next batch tries afresh.
func (g *ingester) report(err error, n int) {
	switch {
	case err != nil && g.refused == 0:
		g.log.Error("writes refused until the next commit succeeds", "err", err)
		g.refused += n
	case err != nil:
		g.refused += n
	case g.refused > 0:
		g.log.Info("writes resumed", "refused", g.refused)
		g.refused = 0
	}
}

// gather takes first and whatever else is queued on in, up to
// maxIngestBatch: a batch grows with the load and never waits (both
// backends' writers).
func gather[T any](first T, in <-chan T) []T {
	batch := []T{first}
	for len(batch) < maxIngestBatch {
		select {
		case p := <-in:
			batch = append(batch, p)
		default:
			return batch
		}
	}
	return batch
}

// indexSearch queues the batch's search index updates.
func (g *ingester) indexSearch(ops []*lmdbw.Op) {
	for _, op := range ops {
		for _, gone := range op.Removed {
			g.search.remove(gone)
		}
		if op.Outcome == lmdbw.Stored {
			g.search.index(op.Event)
		}
	}
}

// announceLoop announces each committed batch in order, then releases it.
func (g *ingester) announceLoop() {
	for batch := range g.out {
		for _, p := range batch {
			if p.op.Outcome == lmdbw.Stored && p.op.Action != lmdbw.Delete {
				g.announce(p.op.Event)
			}
			close(p.done)
		}
	}
}

// hookResult turns an op's outcome into what khatru's store hooks return:
// nil for a stored, duplicate or superseded event (OK true). A stored
// event was already announced (OnStored, broadcast) by the ingester, in
// commit order; khatru announces none (khatru.Relay.StoreAnnounces).
func hookResult(op *lmdbw.Op) error {
	switch op.Outcome {
	case lmdbw.Stored, lmdbw.Duplicate, lmdbw.Ignored, lmdbw.Removed:
		return nil
	case lmdbw.Deleted:
		return errDeleted
	}
	return op.Err
}
