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

// stream is one streamed answer: the filter with the limit still to
// answer, and the cursor after the last event handed over.
type stream struct {
	s      *store
	filter nostr.Filter
	after  cursor
	purged int
}

// chunk is one read of a stream: its hits, and what they hold of the
// budget (released once they are handed over).
type chunk struct {
	hits   []hit
	charge *charge
	more   bool // the chunk stopped at its byte ceiling: read on
}

// next reads the chunk after the cursor; expired events met are purged
// (at most maxPurgePerQuery per answer).
func (st *stream) next(ctx context.Context) (chunk, error) {
	c := st.s.budget.newCharge(st.s.limits.MaxQueryBytes)
	hits, expired, cut, err := st.s.read(ctx, st.filter, st.after, c)
	st.purge(ctx, expired)
	if err != nil {
		c.release()
		return chunk{}, err
	}
	st.filter.Limit -= len(hits)
	if n := len(hits); n > 0 {
		st.after = cursor{set: true, ts: hits[n-1].ts, id: hits[n-1].id}
	}
	return chunk{hits: hits, charge: c, more: cut && len(hits) > 0 && st.filter.Limit > 0}, nil
}

// purge removes expired events from the store.
func (st *stream) purge(ctx context.Context, expired []*nostr.Event) {
	for _, evt := range expired {
		if st.purged >= maxPurgePerQuery {
			return
		}
		st.purged++
		st.s.removeEvent(context.WithoutCancel(ctx), evt)
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

// streamQuery answers a non-search filter. The first chunk is read here,
// so that a refusal (errBusy) or a failure is query's error; an answer
// that fits in it is returned as a channel that is already full (most
// answers: no goroutine, and a caller that reads only the first event
// leaves nothing behind). A larger answer is streamed by a goroutine that
// the query owns, through an unbuffered channel: it ends when the answer
// is handed over or ctx ends (a REQ CLOSEd, a client gone), and calls done
// (the store's enter) then. A later chunk's failure is reported with
// khatru.FailQuery (a REQ is then CLOSED with its reason) and to
// querySync.
func (s *store) streamQuery(ctx context.Context, filter nostr.Filter, done func()) (chan *nostr.Event, error) {
	st := &stream{s: s, filter: filter}
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
