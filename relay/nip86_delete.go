package relay

import (
	"context"
	"errors"
	"fmt"

	"github.com/nbd-wtf/go-nostr"
)

// Bounds of deleteevents: events read per query and deleted per call; a
// call that reached the bound answers "more": true, and the operator
// calls again.
const (
	deletePage    = 500
	maxDeleteCall = 10_000
)

// deleted is deleteevents' answer.
type deleted struct {
	Deleted int  `json:"deleted"`
	More    bool `json:"more"` // the bound was reached: call again
}

// deleteByFilter deletes the stored events matching a filter, at most
// maxDeleteCall per call: ["filter"] (agentnode's NIP-86 extension
// "deleteevents"). An empty filter and a search are refused.
func (r *Relay) deleteByFilter(ctx context.Context, params []any) (any, error) {
	if len(params) != 1 {
		return nil, errors.New("invalid: deleteevents takes [filter], one NIP-01 filter object")
	}
	f, err := parseFilter(params[0])
	if err != nil {
		return nil, err
	}
	if err := deletable(f); err != nil {
		return nil, err
	}
	var out deleted
	for out.Deleted < maxDeleteCall {
		f.Limit = min(deletePage, maxDeleteCall-out.Deleted)
		evts, err := r.store.querySync(ctx, f)
		if err != nil {
			return nil, fmt.Errorf("error: reading the events to delete failed after %d deleted", out.Deleted)
		}
		for _, evt := range evts {
			if err := r.store.delete(ctx, evt); err != nil {
				return nil, fmt.Errorf("error: deleting failed after %d deleted", out.Deleted)
			}
			out.Deleted++
		}
		if len(evts) < f.Limit {
			return out, nil
		}
	}
	out.More = true
	return out, nil
}

// deletable refuses a filter that names nothing (it would delete every
// event) or searches (NIP-50 ranks; it does not select exactly).
func deletable(f nostr.Filter) error {
	if f.Search != "" {
		return errors.New("invalid: deleteevents does not take a search filter")
	}
	if len(f.IDs) == 0 && len(f.Authors) == 0 && len(f.Kinds) == 0 && len(f.Tags) == 0 && f.Since == nil && f.Until == nil {
		return errors.New("invalid: an empty filter would delete every event; name ids, authors, kinds, tags, since or until")
	}
	return nil
}
