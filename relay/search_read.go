package relay

import (
	"context"

	"github.com/nbd-wtf/go-nostr"
)

// collectSearch answers a search filter: the ids the search index ranks
// best, read back from LMDB by the store's reader in rank order, each
// decoded into the JSON of its EVENT frame and checked with
// filter.Matches (ids, tags, expiry), stopping at filter.Limit matches or
// at Limits.MaxQueryBytes. The ranked window widens (x4, up to
// maxSearchWindow ids) while post-filtering leaves the answer short. A
// search holds ids, not events, until a candidate enters the answer.
func (s *store) collectSearch(ctx context.Context, filter nostr.Filter) ([]hit, []*nostr.Event, error) {
	since, until, ok := timeBounds(filter)
	if !ok {
		return nil, nil, nil
	}
	for ask := filter.Limit; ; ask = min(ask*4, s.limits.MaxCount) {
		window := filter
		window.Limit = ask
		ids, err := s.search.ids(ctx, window)
		if err != nil {
			return nil, nil, err
		}
		r := &rankedReader{sieve: sieve{filter: filter, now: nostr.Now()}, wanted: wantedIDs(ids),
			charge: s.budget.newCharge(s.limits.MaxQueryBytes)}
		if len(ids) > 0 {
			err = s.reader.Read(ctx, s.reader.Plan(nostr.Filter{IDs: ids}), since, until, r.visit)
		}
		r.charge.release()
		if err == nil {
			err = r.failed
		}
		if err != nil {
			return nil, r.expired, err
		}
		exhausted := len(ids) < ask || ask >= s.limits.MaxCount || ask >= maxSearchWindow || r.cut
		if len(r.hits) >= filter.Limit || exhausted || ctx.Err() != nil {
			return r.hits, r.expired, ctx.Err()
		}
	}
}

// rankedReader keeps the first filter.Limit matches of a search's ranked
// ids, in rank order.
type rankedReader struct {
	sieve
	wanted map[string]struct{} // ranked ids not met yet
	dec    recordDecoder
	hits   []hit
	charge *charge
	cut    bool // stopped at the byte ceiling
	failed error
}

func (r *rankedReader) visit(ts uint32, raw []byte) bool {
	if len(raw) < 138 {
		r.failed = errRecord
		return false
	}
	if !takeWanted(r.wanted, raw) {
		return true
	}
	m := r.dec.mark()
	h, err := r.dec.hit(raw)
	if err != nil {
		r.failed = err
		return false
	}
	if !r.keep(h.evt, raw) {
		r.dec.rollback(m)
		return true
	}
	if err := r.charge.grow(h.size()); err != nil {
		r.dec.rollback(m)
		r.cut = true
		if err == errBusy {
			r.failed = err
		}
		return false
	}
	h.ts, h.id = ts, h.evt.ID
	r.hits = append(r.hits, h)
	return len(r.hits) < r.filter.Limit
}

// takeWanted reports whether raw's id is in wanted, and takes it out (an
// 8-byte id prefix may be shared, and each id is read once).
func takeWanted(wanted map[string]struct{}, raw []byte) bool {
	var buf [64]byte
	id := string(hexID32(buf[:], raw))
	if _, ok := wanted[id]; !ok {
		return false
	}
	delete(wanted, id)
	return true
}

// wantedIDs is the set of ids.
func wantedIDs(ids []string) map[string]struct{} {
	set := make(map[string]struct{}, len(ids))
	for _, id := range ids {
		set[id] = struct{}{}
	}
	return set
}
