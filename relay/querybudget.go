package relay

import (
	"errors"
	"sync/atomic"
)

// Bounds on the memory of reads (docs/RELAY.md, "Bounded reads").
//
// A query holds at most its limit of events, and at most
// Limits.MaxQueryBytes of them at once: a non-search answer larger than
// that is streamed in chunks (stream.go), each charged while it is read
// and handed over, so the whole answer arrives; a search stops there and
// answers what it holds (its first events in rank order). Every query, COUNT and
// search of the process charges what it holds to one queryBudget of
// Limits.QueryMemory bytes; a query that would take the process past it is
// refused with errBusy.

var (
	// errBusy refuses a query that would take the memory held by the
	// process's queries past Limits.QueryMemory.
	errBusy = errorf("rate-limited", "too many large queries at once, try again")
	// errTooMuch ends a chunk at its own byte ceiling (internal: the read
	// then hands over what it holds and, streamed, reads on).
	errTooMuch = errors.New("relay: query byte ceiling reached")
)

// queryBudget is the process-wide count of bytes held by queries.
type queryBudget struct {
	limit int64
	held  atomic.Int64
	peak  atomic.Int64 // the most held at once (tests, figures)
}

func newQueryBudget(limit int) *queryBudget { return &queryBudget{limit: int64(limit)} }

// charge is one query's share of a budget: what it holds, and what it
// has reserved of the budget (in chunks, so that a query of small events
// touches the shared counter once or twice).
type charge struct {
	budget   *queryBudget
	most     int64 // the query's own ceiling
	held     int64
	reserved int64
}

// reserveChunk is how much a charge reserves of the budget at a time.
const reserveChunk = 32 << 10

// newCharge starts a query's charge, bounded by most bytes.
func (b *queryBudget) newCharge(most int) *charge { return &charge{budget: b, most: int64(most)} }

// grow charges n more bytes (n < 0 gives some back to the query): it
// fails with errTooMuch past the query's ceiling (the first hit always
// fits) and with errBusy past the process's budget; nothing is charged
// then.
func (c *charge) grow(n int) error {
	want := c.held + int64(n)
	if n > 0 && c.held > 0 && want > c.most {
		return errTooMuch
	}
	if want > c.reserved {
		if err := c.reserve(want - c.reserved); err != nil {
			return err
		}
	}
	c.held = want
	return nil
}

// reserve takes need more bytes of the budget (a chunk when it can).
func (c *charge) reserve(need int64) error {
	for _, n := range []int64{max(need, reserveChunk), need} {
		if held := c.budget.held.Add(n); held <= c.budget.limit {
			c.reserved += n
			c.budget.notePeak(held)
			return nil
		}
		c.budget.held.Add(-n)
	}
	return errBusy
}

// release gives back everything reserved.
func (c *charge) release() {
	c.budget.held.Add(-c.reserved)
	c.held, c.reserved = 0, 0
}

// notePeak records held if it is the most held so far.
func (b *queryBudget) notePeak(held int64) {
	for p := b.peak.Load(); held > p && !b.peak.CompareAndSwap(p, held); p = b.peak.Load() {
	}
}
