package directory

import (
	"github.com/nbd-wtf/go-nostr"
)

// loadCursor walks a filter's matches newest first, page by page, over
// the query API alone (NIP-01 filters have no "after this id"). It asks
// for events at or before until, with a limit of the events it has
// already read at second until plus loadPage: a store answers in NIP-01's
// order (newest first, ties by lowest id) — or in any order that is the
// same from one query to the next — so the events of second until it has
// read come first and the new ones follow. A page made only of second
// until widens the next one; a full second never ends the walk (the
// older seconds follow it).
//
// What it relies on: the store cuts an answer at the limit in a stable
// order. It does not rely on the store reading only the limit: a store
// that reads the whole second internally answers the same.
type loadCursor struct {
	until   nostr.Timestamp // the newest second of the next page, once bounded
	bounded bool            // false: from the newest
	atIDs   map[string]bool // ids read at second until
	avg     int             // estimated bytes of an event of the last page
}

// filter is f for the next page.
func (c *loadCursor) filter(f nostr.Filter) nostr.Filter {
	f.Limit = len(c.atIDs) + loadPage
	if c.bounded {
		until := c.until
		f.Until = &until
	}
	return f
}

// seen reports whether evt was read by an earlier page.
func (c *loadCursor) seen(evt *nostr.Event) bool {
	return c.bounded && evt.CreatedAt == c.until && c.atIDs[evt.ID]
}

// advance moves the cursor past a full page, newest first. It returns why
// it skipped the rest of a second ("" when it did not): the next query
// would exceed loadBudget, or the store's order is not stable.
func (c *loadCursor) advance(page []*nostr.Event) (skipped string) {
	oldest := page[len(page)-1].CreatedAt
	for _, evt := range page {
		oldest = min(oldest, evt.CreatedAt)
	}
	c.avg = avgSize(page)
	if !c.bounded || oldest != c.until {
		c.until, c.bounded, c.atIDs = oldest, true, map[string]bool{}
	}
	fresh := 0
	for _, evt := range page {
		if evt.CreatedAt == oldest && !c.atIDs[evt.ID] {
			c.atIDs[evt.ID] = true
			fresh++
		}
	}
	switch {
	case fresh == 0:
		skipped = "the store answered the same page twice"
	case (len(c.atIDs)+loadPage)*c.avg > loadBudget:
		skipped = "the next page would exceed the load's memory budget"
	default:
		return ""
	}
	c.until, c.atIDs = oldest-1, map[string]bool{}
	return skipped
}

// avgSize estimates the bytes one event of page takes.
func avgSize(page []*nostr.Event) int {
	total := 0
	for _, evt := range page {
		total += 200 + len(evt.Content)
		for _, tag := range evt.Tags {
			for _, v := range tag {
				total += 16 + len(v)
			}
		}
	}
	return total / max(len(page), 1)
}
