package relay

import (
	"cmp"
	"context"
	"math"
	"slices"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/relay/internal/lmdbw"
)

// hit is one answer of a read: the event and its JSON (nil: encode it).
type hit struct {
	evt  *nostr.Event
	json []byte
}

// read answers a non-search filter from LMDB with the store's own reader
// (lmdbw.Plan / Read): one index, walked newest first on this goroutine,
// each candidate decoded straight into the JSON of its EVENT frame and
// checked with filter.Matches, stopping as soon as filter.Limit events
// match (and the rest of that second is read, so that ties are cut by id).
// The answer is newest first, ties by id ascending. Expired events are set
// apart for purging. filter's values must be de-duplicated and its limit
// set.
func (s *store) read(ctx context.Context, filter nostr.Filter) (hits []hit, expired []*nostr.Event, err error) {
	since, until, ok := timeBounds(filter)
	if !ok {
		return nil, nil, nil
	}
	plan := s.reader.Plan(filter)
	limit, now := filter.Limit, nostr.Now()
	var dec recordDecoder
	hits = make([]hit, 0, min(limit, 16))
	var failed error
	err = s.reader.Read(ctx, plan, since, until, func(ts uint32, raw []byte) bool {
		if len(hits) >= limit && int64(ts) < int64(hits[limit-1].evt.CreatedAt) {
			return false
		}
		var h hit
		h, failed = dec.hit(raw)
		if failed != nil {
			return false
		}
		if isExpired(h.evt, now) {
			expired = append(expired, h.evt)
		} else if filter.Matches(h.evt) {
			hits = append(hits, h)
		}
		return true
	})
	if err == nil {
		err = failed
	}
	slices.SortFunc(hits, func(a, b hit) int {
		return cmp.Or(cmp.Compare(b.evt.CreatedAt, a.evt.CreatedAt), cmp.Compare(a.evt.ID, b.evt.ID))
	})
	return hits[:min(len(hits), limit)], expired, err
}

// hit decodes raw; a record JSON cannot carry as it is (a string that is
// not UTF-8) is decoded alone and left for khatru to encode.
func (rd *recordDecoder) hit(raw []byte) (hit, error) {
	evt, body, err := rd.decode(raw)
	if err == errNotUTF8 {
		evt, err = lmdbw.Decode(raw)
		return hit{evt: evt}, err
	}
	return hit{evt: evt, json: body}, err
}

// timeBounds turns since/until into the reader's inclusive uint32 range;
// false when nothing can match.
func timeBounds(f nostr.Filter) (since, until uint32, ok bool) {
	until = math.MaxUint32
	if f.Since != nil && *f.Since > 0 {
		if *f.Since > math.MaxUint32 {
			return 0, 0, false
		}
		since = uint32(*f.Since)
	}
	if f.Until != nil {
		if *f.Until < 0 {
			return 0, 0, false
		}
		if *f.Until < math.MaxUint32 {
			until = uint32(*f.Until)
		}
	}
	return since, until, since <= until
}
