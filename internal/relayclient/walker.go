package relayclient

import (
	"context"
	"fmt"

	"github.com/nbd-wtf/go-nostr"
)

// walker is the state of one Walk: the oldest second read so far (until,
// once bounded) and the ids of its events already handed on.
type walker struct {
	p       Paging
	since   *nostr.Timestamp
	until   nostr.Timestamp
	bounded bool
	atIDs   map[string]bool
	honours int       // the largest answer the relay gave: it answers at least this many
	left    *leftover // a second left unread, maybe: reported if older events follow
	done    Walked
}

// leftover is a second whose rest may be unread: the relay answered
// fewer events than asked, all of that second and all read already,
// which is what a relay holding no more answers, and what one capping
// its answers there does.
type leftover struct {
	second nostr.Timestamp
	read   int
	cap    int
}

// filter is f for the next page: at or before until, with a limit of a
// page more than the events of until already read.
func (w *walker) filter(f nostr.Filter) nostr.Filter {
	f.Limit, f.LimitZero = len(w.atIDs)+w.p.Page, false
	f.Until = nil
	if w.bounded {
		until := w.until
		f.Until = &until
	}
	return f
}

// step sends one query, hands on its new events and moves the cursor; more
// is false when the walk is over.
func (w *walker) step(ctx context.Context, q Querier, f nostr.Filter, fn func([]*nostr.Event) error) (more bool, err error) {
	page, err := q.QuerySync(ctx, f)
	if err != nil {
		return false, err
	}
	w.done.Pages++
	kept, fresh := w.sort(page)
	if err := w.reportLeft(len(kept) > 0); err != nil {
		return false, err
	}
	if left := w.p.MaxEvents - w.done.Events; w.p.MaxEvents > 0 && len(fresh) >= left {
		fresh, w.done.Cut = fresh[:left], true
	}
	if len(fresh) > 0 {
		w.done.Events += len(fresh)
		if err := fn(fresh); err != nil {
			return false, err
		}
	}
	honoured := f.Limit <= w.honours // the relay answers this many: a short page is the end
	w.honours = max(w.honours, len(page))
	if w.done.Cut || len(kept) == 0 || (honoured && len(page) < f.Limit) {
		return false, nil
	}
	return w.advance(kept, len(fresh), len(page) < f.Limit)
}

// reportLeft tells OnSkip of a leftover second once the next query found
// older events: a relay holding no more of that second would have sent
// them with it, so it caps its answers.
func (w *walker) reportLeft(older bool) error {
	l := w.left
	w.left = nil
	if l == nil || !older {
		return nil
	}
	return w.skipped(l.second, l.read, fmt.Sprintf("the relay answers at most %d events a query", l.cap))
}

// sort keeps the events of page at or before until (a relay that ignores
// until cannot loop the walk) and picks those not handed on before.
func (w *walker) sort(page []*nostr.Event) (kept, fresh []*nostr.Event) {
	for _, evt := range page {
		if w.bounded && evt.CreatedAt > w.until {
			continue
		}
		kept = append(kept, evt)
		if !w.bounded || evt.CreatedAt != w.until || !w.atIDs[evt.ID] {
			fresh = append(fresh, evt)
		}
	}
	return kept, fresh
}

// advance moves until to the oldest second of a page and remembers the
// page's events of that second, or goes on before a second that cannot
// be read on (see Walk). short: the page held fewer events than asked.
func (w *walker) advance(kept []*nostr.Event, fresh int, short bool) (more bool, err error) {
	oldest := kept[0].CreatedAt
	for _, evt := range kept {
		oldest = min(oldest, evt.CreatedAt)
	}
	switch {
	case fresh == 0 && oldest != w.until:
		return false, nil // nothing new, nothing older: the relay has no more
	case fresh == 0 && short && (len(kept) < len(w.atIDs) || (w.p.Cap > 0 && len(kept) >= w.p.Cap)): // surely its cap
		return w.skip(fmt.Sprintf("the relay answers at most %d events a query", len(kept)))
	case fresh == 0 && short: // the relay holds no more of that second, or caps its answers there
		w.left = &leftover{second: w.until, read: len(w.atIDs), cap: len(kept)}
		return w.before()
	case fresh == 0:
		return w.skip("the relay answered the same events again")
	}
	if w.atIDs == nil || oldest != w.until {
		w.until, w.bounded, w.atIDs = oldest, true, map[string]bool{}
	}
	for _, evt := range kept {
		if evt.CreatedAt == oldest {
			w.atIDs[evt.ID] = true
		}
	}
	switch {
	case len(w.atIDs) >= w.p.MaxSecond:
		return w.skip("the walk read the most it reads of one second")
	case w.p.MaxQueryBytes > 0 && (len(w.atIDs)+w.p.Page)*avgSize(kept) > w.p.MaxQueryBytes:
		return w.skip("the next query would exceed the walk's memory budget")
	}
	return true, nil
}

// skip leaves the rest of second until, says so, and goes on before it.
func (w *walker) skip(why string) (more bool, err error) {
	if err := w.skipped(w.until, len(w.atIDs), why); err != nil {
		return false, err
	}
	return w.before()
}

// skipped counts a second left and tells OnSkip.
func (w *walker) skipped(second nostr.Timestamp, read int, why string) error {
	w.done.Skipped++
	if w.p.OnSkip == nil {
		return nil
	}
	return w.p.OnSkip(second, read, why)
}

// before moves the cursor to the second before until, if the filter
// reaches it.
func (w *walker) before() (more bool, err error) {
	if w.until <= 0 || (w.since != nil && w.until <= *w.since) {
		return false, nil
	}
	w.until, w.atIDs = w.until-1, nil
	return true, nil
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
