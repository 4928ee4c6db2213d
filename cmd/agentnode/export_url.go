package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip11"

	"github.com/agentnode/agentnode/internal/relayclient"
)

// exportPage is the limit of each REQ an export over a URL sends; the
// relay may answer fewer (its own cap).
const exportPage = 500

// errStuck: more events share one created_at than the relay answers in a
// page, so paging by created_at cannot get past them.
var errStuck = errors.New("more events share one created_at than the relay returns in a page")

// exportURL pages through a relay's events matching filter, newest first,
// with one REQ at a time (until = the oldest created_at seen, the events
// already written at that second skipped), so that memory holds one page.
func exportURL(ctx context.Context, url string, filter nostr.Filter, visit func(*nostr.Event) error) error {
	conn, err := relayclient.Dial(ctx, url, relayclient.Options{Verify: true})
	if err != nil {
		return err
	}
	defer conn.Close()
	return exportPaged(ctx, func(ctx context.Context, f nostr.Filter) ([]*nostr.Event, error) {
		return conn.Query(ctx, nostr.Filters{f})
	}, filter, pageSize(ctx, url), visit)
}

// pageSize is exportPage, or less if the relay's NIP-11 document says its
// max_limit is lower: a page is full only when it holds what was asked.
func pageSize(ctx context.Context, url string) int {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	info, err := nip11.Fetch(ctx, url)
	if err != nil || info.Limitation == nil || info.Limitation.MaxLimit <= 0 {
		return exportPage
	}
	return min(exportPage, info.Limitation.MaxLimit)
}

// exportPaged pages through query's answers as described at exportURL,
// asking for size events a page (query must answer that many when it has
// them).
func exportPaged(ctx context.Context, query func(context.Context, nostr.Filter) ([]*nostr.Event, error), filter nostr.Filter, size int, visit func(*nostr.Event) error) error {
	p := pager{filter: filter, left: filter.Limit, size: size}
	for {
		page, err := query(ctx, p.next())
		if err != nil {
			return err
		}
		done, err := p.take(page, visit)
		if done || err != nil {
			return err
		}
	}
}

// pager is the state of a paged export: the next until and the ids
// already written at that second.
type pager struct {
	filter  nostr.Filter
	until   *nostr.Timestamp
	atUntil map[string]bool
	left    int // events still wanted (0: no limit)
	size    int // events asked for a page
}

// next is the filter of the next page.
func (p *pager) next() nostr.Filter {
	f := p.filter
	if p.until != nil {
		f.Until = p.until
	}
	f.Limit = p.size
	if p.left > 0 {
		f.Limit = min(p.left, p.size)
	}
	return f
}

// take writes a page's new events and moves the cursor; done is true
// once the relay has nothing older.
func (p *pager) take(page []*nostr.Event, visit func(*nostr.Event) error) (done bool, err error) {
	if len(page) == 0 {
		return true, nil
	}
	oldest, fresh := page[len(page)-1].CreatedAt, 0
	seen := map[string]bool{}
	for _, evt := range page {
		if evt.CreatedAt < oldest {
			oldest = evt.CreatedAt
		}
		if p.atUntil[evt.ID] {
			continue
		}
		if err := visit(evt); err != nil {
			return true, err
		}
		fresh++
		if p.left > 0 {
			if p.left--; p.left == 0 {
				return true, nil
			}
		}
	}
	for _, evt := range page {
		if evt.CreatedAt == oldest {
			seen[evt.ID] = true
		}
	}
	return p.advance(page, oldest, fresh, seen)
}

// advance sets the next until: the oldest second again (its unseen events
// may follow) after a page with new events, the second before it after a
// page of already written ones — unless that page was full and all of one
// second: then more of that second may exist than a page can show.
func (p *pager) advance(page []*nostr.Event, oldest nostr.Timestamp, fresh int, seen map[string]bool) (bool, error) {
	if fresh > 0 {
		p.until, p.atUntil = &oldest, seen
		return false, nil
	}
	if len(seen) == len(page) && len(page) >= p.size {
		return true, fmt.Errorf("%w (%d at created_at %d): export from the data directory (--data) instead", errStuck, len(page), oldest)
	}
	if oldest == 0 {
		return true, nil
	}
	before := oldest - 1
	p.until, p.atUntil = &before, nil
	return false, nil
}
