package relay

import (
	"context"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/relay/internal/khatru"
)

// A non-search answer is streamed (docs/RELAY.md, "Bounded reads"): it is
// read in chunks of at most Limits.MaxQueryBytes, each handed to the
// query's channel before the next is read, from a cursor, so a query
// holds about one chunk at a time whatever the size of its answer, and
// the consumer (khatru's REQ handler writing to a paced outbox, or
// querySync) drains it at the reader's pace. The answer is NIP-01's order
// throughout: newest first, ties by id ascending.

// stream is one streamed answer: how a backend reads a chunk, the filter
// with the limit still to answer, and the cursor after the last event
// handed over.
type stream struct {
	read   chunkReader
	filter nostr.Filter
	after  cursor
}

// chunkReader reads the part of filter's answer after the cursor, at most
// filter.Limit events and what one charge of the backend's budget allows.
type chunkReader func(ctx context.Context, filter nostr.Filter, after cursor) (chunk, error)

// chunk is one read of a stream: its hits, and what they hold of the
// budget (released once they are handed over).
type chunk struct {
	hits   []hit
	charge *charge
	more   bool // the chunk stopped at its byte ceiling: read on
}

// next reads the chunk after the cursor and moves the cursor past it.
func (st *stream) next(ctx context.Context) (chunk, error) {
	c, err := st.read(ctx, st.filter, st.after)
	if err != nil {
		return chunk{}, err
	}
	st.filter.Limit -= len(c.hits)
	if n := len(c.hits); n > 0 {
		last := c.hits[n-1].evt
		st.after = cursor{set: true, ts: last.CreatedAt, id: last.ID}
	}
	c.more = c.more && len(c.hits) > 0 && st.filter.Limit > 0
	return c, nil
}

// readChunk is the store's chunkReader (store.read); expired events met
// are purged, at most maxPurgePerQuery per answer.
func (s *store) readChunk() chunkReader {
	purged := 0
	return func(ctx context.Context, filter nostr.Filter, after cursor) (chunk, error) {
		c := s.budget.newCharge(s.limits.MaxQueryBytes)
		hits, expired, cut, err := s.read(ctx, filter, after, c)
		for _, evt := range expired {
			if purged++; purged <= maxPurgePerQuery {
				s.removeEvent(context.WithoutCancel(ctx), evt)
			}
		}
		if err != nil {
			c.release()
			return chunk{}, err
		}
		return chunk{hits: hits, charge: c, more: cut}, nil
	}
}

// run hands first and every next chunk to out, one event at a time,
// until the limit, the store or ctx ends; it returns the error that cut
// the answer short (ctx's, or the budget's errBusy).
func (st *stream) run(ctx context.Context, first chunk, out chan<- *nostr.Event) error {
	stash := khatru.WantsEncoded(ctx)
	for c := first; ; {
		err := send(ctx, c.hits, stash, out)
		c.charge.release()
		if err != nil || !c.more {
			return err
		}
		if c, err = st.next(ctx); err != nil {
			return err
		}
	}
}

// send hands hits to out in order; ctx's error when it ended first.
func send(ctx context.Context, hits []hit, stash bool, out chan<- *nostr.Event) error {
	for i, h := range hits {
		if stash && h.json != nil {
			khatru.SetEncoded(ctx, h.evt, h.json)
		}
		select {
		case out <- h.evt:
			hits[i] = hit{} // the consumer has it: the chunk no longer holds it
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// streamQuery answers a filter as a stream of chunks read by read. The
// first chunk is read here, so that a refusal (errBusy) or a failure is
// query's error; an answer that fits in it is returned as a channel that
// is already full (most answers: no goroutine, and a caller that reads
// only the first event leaves nothing behind). A larger answer is
// streamed by a goroutine that the query owns, through an unbuffered
// channel: it ends when the answer is handed over or ctx ends (a REQ
// CLOSEd, a client gone), and calls done (the backend's enter) then. A
// later chunk's failure is reported with khatru.FailQuery (a REQ is then
// CLOSED with its reason) and to querySync.
func streamQuery(ctx context.Context, filter nostr.Filter, read chunkReader, done func()) (chan *nostr.Event, error) {
	st := &stream{read: read, filter: filter}
	first, err := st.next(ctx)
	if err != nil {
		done()
		return nil, err
	}
	if !first.more {
		defer done()
		defer first.charge.release()
		return filled(ctx, first.hits), nil
	}
	out := make(chan *nostr.Event)
	go func() {
		defer done()
		defer close(out)
		if err := st.run(ctx, first, out); err != nil && ctx.Err() == nil {
			failQuery(ctx, err)
		}
	}()
	return out, nil
}

// collect reads a query's channel to its end: the events, and the error
// that cut a streamed answer short (or ctx's).
func collect(ctx context.Context, query func(context.Context) (chan *nostr.Event, error)) ([]*nostr.Event, error) {
	ctx, failed := withQueryErr(ctx)
	ch, err := query(ctx)
	if err != nil {
		return nil, err
	}
	var out []*nostr.Event
	for evt := range ch {
		out = append(out, evt)
	}
	if *failed != nil {
		return out, *failed
	}
	return out, ctx.Err()
}

// filled is a closed channel holding hits.
func filled(ctx context.Context, hits []hit) chan *nostr.Event {
	out := make(chan *nostr.Event, len(hits))
	stash := khatru.WantsEncoded(ctx)
	for _, h := range hits {
		if stash && h.json != nil {
			khatru.SetEncoded(ctx, h.evt, h.json)
		}
		out <- h.evt
	}
	close(out)
	return out
}

// queryErrKey is the context key of querySync's error slot.
type queryErrKey struct{}

// withQueryErr gives ctx a slot for the error of a streamed answer.
func withQueryErr(ctx context.Context) (context.Context, *error) {
	var slot error
	return context.WithValue(ctx, queryErrKey{}, &slot), &slot
}

// failQuery reports the error that cut a streamed answer short, before
// its channel is closed: to khatru's REQ handler and to querySync.
func failQuery(ctx context.Context, err error) {
	khatru.FailQuery(ctx, err)
	if slot, ok := ctx.Value(queryErrKey{}).(*error); ok {
		*slot = err
	}
}
