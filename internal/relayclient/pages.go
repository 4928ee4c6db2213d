package relayclient

import (
	"context"

	"github.com/nbd-wtf/go-nostr"
)

// Querier answers one filter with the stored events matching it, at most
// its limit, newest first: NIP-01's order (ties by lowest id) or any
// order of ties that is the same from one query to the next.
// *relay.Relay and agentd's sources have this method, Conn and Relay too;
// QueryFunc adapts a function.
type Querier interface {
	QuerySync(ctx context.Context, filter nostr.Filter) ([]*nostr.Event, error)
}

// QueryFunc is a function used as a Querier.
type QueryFunc func(ctx context.Context, filter nostr.Filter) ([]*nostr.Event, error)

// QuerySync calls f.
func (f QueryFunc) QuerySync(ctx context.Context, filter nostr.Filter) ([]*nostr.Event, error) {
	return f(ctx, filter)
}

// Paging tunes Walk. The zero value reads everything in pages of
// DefaultPage, at most DefaultPage·10 events of any one second.
type Paging struct {
	// Page is how many new events a query asks for (DefaultPage when 0).
	Page int
	// Honours, when not 0, is a limit q is known to answer in full when
	// it holds that many (its max_limit): a page shorter than a limit up
	// to it ends the walk at once. Otherwise the walk learns it from the
	// answers, at the cost of a query or two at the end.
	Honours int
	// Cap, when not 0, is the most events q answers a query (a relay's
	// NIP-11 max_limit): an answer of Cap events, all of one second and
	// all read, leaves the rest of that second at once (OnSkip). Without
	// it, OnSkip hears of a capped second only once older events show the
	// cap: the rest of a capped oldest second is left unreported.
	Cap int
	// MaxSecond is the most events of one second the walk reads (10·Page
	// when 0): each query into a second asks again for the ones of it
	// already read, so a second holding more (anyone chooses created_at)
	// is left there (OnSkip) and the older seconds follow.
	MaxSecond int
	// MaxQueryBytes, when not 0, bounds the estimated size of one
	// query's answer: a crowded second whose next query would exceed it
	// is left likewise.
	MaxQueryBytes int
	// MaxEvents, when not 0, is the most events the walk hands on;
	// reaching it ends the walk with Walked.Truncated.
	MaxEvents int
	// MaxPages, when not 0, is the most queries the walk sends; reaching
	// it ends the walk with Walked.Truncated.
	MaxPages int
	// OnSkip is told when the rest of a second is left unread (the
	// second, how many of its events were read, and why). An error it
	// returns ends the walk with that error; nil goes on.
	OnSkip func(second nostr.Timestamp, read int, why string) error
}

// DefaultPage is a Paging's page size when it sets none.
const DefaultPage = 500

// Walked is what a walk did.
type Walked struct {
	Pages   int  // queries sent
	Events  int  // events handed on
	Skipped int  // seconds whose rest was left unread
	Cut     bool // ended at MaxEvents or MaxPages, not at the end of the matches
}

// Walk reads filter's matches from q newest first, page by page, and
// hands each page's events not handed on before to fn (in q's order;
// never an empty page). filter's since and until bound the walk; its
// limit is the walk's own (set Paging.MaxEvents to bound the events).
//
// Pages go back with an inclusive until: the oldest second of the pages
// so far. The events of that second already read are remembered and the
// next query's limit grows by their count, so a second holding more than
// a page (a flood stamped with one second) is read through, never looped
// on nor skipped — up to Paging.MaxSecond (and MaxQueryBytes), past which
// the rest of that second is left (OnSkip) and the older seconds are read
// on. A relay that caps its answers below what the walk asks (its
// max_limit) is read through as well, a page of its size at a time; when
// it answers no more of one second than its cap, the rest of that second
// is left likewise (OnSkip is told once older events show the cap).
//
// The walk ends at a page shorter than a limit the relay was seen to
// honour, at a page that brings nothing new and nothing older, at
// Paging.MaxEvents or MaxPages, or with the first error of q, fn, OnSkip
// or ctx. (Ending at the first short page would trust the relay to
// answer every limit in full: the last page or two of a walk are small
// queries that make sure.)
func Walk(ctx context.Context, q Querier, filter nostr.Filter, p Paging, fn func(page []*nostr.Event) error) (Walked, error) {
	w := walker{p: p.orDefault(), since: filter.Since, honours: p.Honours}
	if filter.Until != nil {
		w.until, w.bounded = *filter.Until, true
	}
	for {
		if err := ctx.Err(); err != nil {
			return w.done, err
		}
		if w.p.MaxPages > 0 && w.done.Pages >= w.p.MaxPages {
			w.done.Cut = true
			return w.done, nil
		}
		more, err := w.step(ctx, q, w.filter(filter), fn)
		if !more || err != nil {
			return w.done, err
		}
	}
}

// All is Walk collecting the events (newest first) instead of handing
// them on: for walks whose caller keeps them all anyway. Set
// Paging.MaxEvents to bound it.
func All(ctx context.Context, q Querier, filter nostr.Filter, p Paging) ([]*nostr.Event, Walked, error) {
	var out []*nostr.Event
	done, err := Walk(ctx, q, filter, p, func(page []*nostr.Event) error {
		out = append(out, page...)
		return nil
	})
	return out, done, err
}

// orDefault fills Page and MaxSecond.
func (p Paging) orDefault() Paging {
	if p.Page <= 0 {
		p.Page = DefaultPage
	}
	if p.MaxSecond <= 0 {
		p.MaxSecond = 10 * p.Page
	}
	return p
}

// QuerySync is Query with one filter: a Conn is a Querier.
func (c *Conn) QuerySync(ctx context.Context, filter nostr.Filter) ([]*nostr.Event, error) {
	return c.Query(ctx, nostr.Filters{filter})
}

// QuerySync is Query: a Relay is a Querier.
func (w *Relay) QuerySync(ctx context.Context, filter nostr.Filter) ([]*nostr.Event, error) {
	return w.Query(ctx, filter)
}

var (
	_ Querier = (*Conn)(nil)
	_ Querier = (*Relay)(nil)
)
