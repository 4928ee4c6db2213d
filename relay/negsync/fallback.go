package negsync

import (
	"cmp"
	"context"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/relayclient"
)

// Download copies every event of filter from the remote by plain REQs,
// newest first, page events a query (500 when 0): the fallback for a
// relay without NIP-77, and the baseline a negentropy sync is measured
// against. It sends every event of the filter, whatever this side holds;
// filter's limit is ignored.
//
// The pages are relayclient.Walk's: a second holding more than a page of
// events is read through, up to ten pages of one second; the rest of a
// second more crowded than that is left (Result.SkippedSeconds counts
// them) and the older seconds are read on.
func Download(ctx context.Context, conn *relayclient.Conn, local Local, filter nostr.Filter, page int) (Result, error) {
	in0, out0 := conn.Traffic()
	var res Result
	walked, err := relayclient.Walk(ctx, conn, filter, relayclient.Paging{Page: cmp.Or(page, 500)}, func(evts []*nostr.Event) error {
		storeAll(ctx, local, evts, &res)
		return nil
	})
	res.SkippedSeconds = walked.Skipped
	in1, out1 := conn.Traffic()
	res.BytesIn, res.BytesOut = in1-in0, out1-out0
	return res, err
}
