package relay

import (
	"errors"
	"sync/atomic"
)

// Bounds on the memory of reads (docs/RELAY.md, "Bounded reads").
//
// A query holds at most its limit of events, and at most
// Limits.MaxQueryBytes of them: past that it stops and answers what it
// holds (fewer events than its limit, the newest). Every query, COUNT and
// search of the process charges what it holds to one queryBudget of
// Limits.QueryMemory bytes; a query that would take the process past it is
// refused with errBusy.

var (
	// errBusy refuses a query that would take the memory held by the
	// process's queries past Limits.QueryMemory.
	errBusy = errorf("rate-limited", "too many large queries at once, try again")
	// errTooMuch ends a read at its own byte ceiling (internal: the read
	// then answers what it holds).
	errTooMuch = errors.New("relay: query byte ceiling reached")
)

// queryBudget is the process-wide count of bytes held by queries.
type queryBudget struct {
	limit int64
	held  atomic.Int64
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
		if c.budget.held.Add(n) <= c.budget.limit {
			c.reserved += n
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
