package negsync

import (
	"cmp"
	"context"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/relayclient"
)

// Download copies every event of filter from the remote by plain REQs,
// newest first, a page of page events at a time (until = the oldest
// created_at seen; ids already seen are skipped, so events sharing a
// second are not lost unless more than a page of them share one): the fallback for a relay without NIP-77, and the
// baseline a negentropy sync is measured against. It sends every event
// of the filter, whatever this side holds.
func Download(ctx context.Context, conn *relayclient.Conn, local Local, filter nostr.Filter, page int) (Result, error) {
	page = cmp.Or(page, 500)
	in0, out0 := conn.Traffic()
	var res Result
	seen := map[string]struct{}{}
	for {
		f := filter
		f.Limit = page
		evts, err := conn.Query(ctx, nostr.Filters{f})
		if err != nil {
			return res, err
		}
		fresh, oldest := storeNew(ctx, local, evts, seen, &res)
		if len(evts) == 0 || (fresh == 0 && len(evts) < page) {
			break
		}
		if fresh == 0 { // a full page of one second, all seen: step past it
			oldest--
		}
		filter.Until = &oldest
	}
	in1, out1 := conn.Traffic()
	res.BytesIn, res.BytesOut = in1-in0, out1-out0
	return res, nil
}

// storeNew stores the events not seen yet; how many were new and the
// oldest created_at of the page.
func storeNew(ctx context.Context, local Local, evts []*nostr.Event, seen map[string]struct{}, res *Result) (fresh int, oldest nostr.Timestamp) {
	var todo []*nostr.Event
	for _, evt := range evts {
		if oldest == 0 || evt.CreatedAt < oldest {
			oldest = evt.CreatedAt
		}
		if _, ok := seen[evt.ID]; !ok {
			seen[evt.ID] = struct{}{}
			todo = append(todo, evt)
		}
	}
	storeAll(ctx, local, todo, res)
	return len(todo), oldest
}
