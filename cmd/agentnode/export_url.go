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
// query (or than an export reads of one second), so paging by created_at
// cannot get past them.
var errStuck = errors.New("more events share one created_at than the relay returns in a query")

// exportURL pages through a relay's events matching filter, newest first,
// with one REQ at a time (relayclient.Walk: until = the oldest created_at
// seen, the events already written at that second skipped), so that
// memory holds one page.
func exportURL(ctx context.Context, url string, filter nostr.Filter, visit func(*nostr.Event) error) error {
	conn, err := relayclient.Dial(ctx, url, relayclient.Options{Verify: true})
	if err != nil {
		return err
	}
	defer conn.Close()
	cap := maxLimit(ctx, url)
	return exportPaged(ctx, func(ctx context.Context, f nostr.Filter) ([]*nostr.Event, error) {
		return conn.Query(ctx, nostr.Filters{f})
	}, filter, cap, visit)
}

// maxLimit is the max_limit the relay's NIP-11 document states, 0 when it
// states none: pages are exportPage or that if lower (a page is full only
// when it holds what was asked), and an answer of that many events all of
// one second is the relay's cap.
func maxLimit(ctx context.Context, url string) int {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	info, err := nip11.Fetch(ctx, url)
	if err != nil || info.Limitation == nil || info.Limitation.MaxLimit <= 0 {
		return 0
	}
	return info.Limitation.MaxLimit
}

// exportPaged pages through query's answers as described at exportURL,
// in pages of exportPage or cap if lower (query answers at most cap
// events a query, 0: not known). It fails with errStuck rather than leave
// part of a second unexported.
func exportPaged(ctx context.Context, query func(context.Context, nostr.Filter) ([]*nostr.Event, error), filter nostr.Filter, cap int, visit func(*nostr.Event) error) error {
	size := exportPage
	if cap > 0 {
		size = min(size, cap)
	}
	_, err := relayclient.Walk(ctx, relayclient.QueryFunc(query), filter, relayclient.Paging{Page: size, Honours: size, Cap: cap, MaxEvents: filter.Limit,
		OnSkip: func(second nostr.Timestamp, read int, why string) error {
			return fmt.Errorf("%w (%d at created_at %d; %s): export from the data directory (--data) instead", errStuck, read, second, why)
		}}, func(page []*nostr.Event) error {
		for _, evt := range page {
			if err := visit(evt); err != nil {
				return err
			}
		}
		return nil
	})
	return err
}
