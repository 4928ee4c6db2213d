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

// errBusy refuses a query that would take the memory held by the process's
// queries past Limits.QueryMemory.
var errBusy = errorf("rate-limited", "too many large queries at once, try again")

// errTooMuch ends a read at its own byte ceiling (internal: the read then
// answers what it holds).
var errTooMuch = errors.New("relay: query byte ceiling reached")

// queryBudget is the process-wide count of bytes held by queries.
type queryBudget struct {
	limit int64
	held  atomic.Int64
}

func newQueryBudget(limit int) *queryBudget { return &queryBudget{limit: int64(limit)} }

// charge is one query's share of a budget; the zero charge of a nil
// budget is unbounded (tests).
type charge struct {
	budget *queryBudget
	most   int64 // the query's own ceiling
	held   int64
}

// newCharge starts a query's charge, bounded by most bytes.
func (b *queryBudget) newCharge(most int) *charge { return &charge{budget: b, most: int64(most)} }

// grow charges n more bytes: errTooMuch past the query's ceiling, errBusy
// past the process's budget (nothing is charged then).
func (c *charge) grow(n int) error {
	if n <= 0 {
		c.held += int64(n)
		if c.budget != nil {
			c.budget.held.Add(int64(n))
		}
		return nil
	}
	if c.held > 0 && c.held+int64(n) > c.most { // the first hit always fits
		return errTooMuch
	}
	if c.budget != nil && c.budget.held.Add(int64(n)) > c.budget.limit {
		c.budget.held.Add(-int64(n))
		return errBusy
	}
	c.held += int64(n)
	return nil
}

// release returns everything charged to the budget.
func (c *charge) release() {
	if c.budget != nil {
		c.budget.held.Add(-c.held)
	}
	c.held = 0
}
