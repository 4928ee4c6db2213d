package relay

import (
	"cmp"
	"context"
	"encoding/hex"
	"math"
	"slices"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/relay/internal/lmdbw"
)

// hit is one answer of a read: the event and its JSON (nil: encode it).
// A hit that entered a full answer holds only its created_at and id until
// the answer is read again (topReader).
type hit struct {
	evt  *nostr.Event
	json []byte
	ts   uint32
	id   string // hex
}

// size is what a decoded hit holds, for the byte ceilings.
func (h hit) size() int {
	if h.json != nil {
		return len(h.json) + hitOverhead
	}
	return 2*len(h.evt.Content) + hitOverhead
}

// hitOverhead is a hit's memory besides its JSON: the event, its tag
// lists and the hit itself.
const hitOverhead = 256

// Bounds of one read (docs/RELAY.md, "Bounded reads").
const (
	// maxTieCandidates is how many more candidates of its oldest second a
	// full answer examines for a lower id: a second holding more events
	// than that (possible only by a patient publisher: anyone chooses
	// created_at) is cut by id among the ones examined.
	maxTieCandidates = 50_000
	// maxPurgePerQuery is how many NIP-40-expired events one read sets
	// apart for purging (the rest are skipped, purged by later reads).
	maxPurgePerQuery = 64
)

// read answers one chunk of a non-search filter from LMDB with the
// store's own reader (lmdbw.Plan / Read): one index, walked newest first
// on this goroutine, each candidate decoded straight into the JSON of its
// EVENT frame and checked with filter.Matches, stopping as soon as
// filter.Limit events match and the next candidate is older than the last
// of them. It holds at most filter.Limit hits at any moment (a
// topReader): the candidates of the last second are compared by the id in
// their raw record and decoded only to check that they match. The chunk
// is newest first, ties by id ascending, and holds at most what c allows
// (Limits.MaxQueryBytes): past that, the first events of that order, and
// cut is true (store.stream reads the rest after the cursor). Only
// candidates after the cursor (after) are read. Expired events are set
// apart for purging. filter's values must be de-duplicated and its limit
// set. The caller releases c once the hits are handed over.
func (s *store) read(ctx context.Context, filter nostr.Filter, after cursor, c *charge) (hits []hit, expired []*nostr.Event, cut bool, err error) {
	since, until, ok := timeBounds(filter)
	if !ok {
		return nil, nil, false, nil
	}
	if after.set && after.ts < nostr.Timestamp(until) {
		until = uint32(max(after.ts, 0))
	}
	if since > until {
		return nil, nil, false, nil
	}
	plan := s.reader.Plan(filter)
	r := newTopReader(filter, c, plan.Index != "id")
	r.after = after
	err = s.reader.Read(ctx, plan, since, until, r.visit)
	if err == nil {
		err = r.failed
	}
	if err != nil {
		return nil, r.expired, false, err
	}
	hits = r.sorted()
	if r.replaced {
		var rcut bool
		hits, rcut, err = s.reread(ctx, r, hits, since, until)
		r.cut = r.cut || rcut
	}
	return hits, r.expired, r.cut, err
}

// reread reads the winners of a crowded second again, by id, in the
// answer's order: the events they replaced are dropped first, and the
// answer stops at the byte ceiling, a prefix of NIP-01's order.
func (s *store) reread(ctx context.Context, r *topReader, winners []hit, since, until uint32) ([]hit, bool, error) {
	ids := make([]string, len(winners))
	for i, h := range winners {
		ids[i] = h.id
	}
	r.dec, r.hits = recordDecoder{}, nil
	r.charge.release()
	filter := r.filter
	filter.Limit = len(ids)
	rr := &rankedReader{sieve: sieve{filter: filter, now: r.now}, wanted: wantedIDs(ids), charge: r.charge}
	err := s.reader.Read(ctx, s.reader.Plan(nostr.Filter{IDs: ids}), since, until, rr.visit)
	if err == nil {
		err = rr.failed
	}
	return rr.hits, rr.cut, err
}

// cursor is where a streamed answer stands: the created_at and id of the
// last event handed over. A chunk after it reads only events older than
// ts, or of second ts with an id above id (NIP-01's order: newest first,
// ties by id ascending).
type cursor struct {
	set bool
	ts  nostr.Timestamp
	id  string // hex
}

// passed reports whether a candidate (its second and raw record) is at or
// before the cursor in NIP-01's order, i.e. was already handed over.
func (c cursor) passed(ts uint32, raw []byte) bool {
	if !c.set || nostr.Timestamp(ts) < c.ts {
		return false
	}
	return nostr.Timestamp(ts) > c.ts || !idAbove(raw, c.id)
}

// topReader keeps the best filter.Limit matches of a walk (newest first,
// ties by lowest id) within a byte ceiling. Until the answer is full each
// match is decoded into dec's arena (a candidate that does not match is
// rolled back); once full (its limit or its ceiling), the hits are a heap
// with the worst on top and a candidate replaces it only if it sorts
// before it, checked first by the id in its raw record, then viewed in
// place (lmdbw.Viewer) to check that it matches; it is kept as its
// id only, and the answer is read again by id at the end (store.reread).
type topReader struct {
	sieve
	limit    int
	ordered  bool // candidates come newest first (every plan but ids)
	dec      recordDecoder
	viewer   lmdbw.Viewer // checks a candidate of a full answer in place
	hits     hitHeap
	full     bool
	replaced bool // a hit was replaced: the answer is read again
	heaped   bool // the hits are a heap (else in walk order)
	worst    int  // index of the hit that sorts last
	ties     int
	charge   *charge
	after    cursor // candidates at or before it were answered already
	cut      bool   // the answer is full at its byte ceiling, not its limit
	failed   error
}

func newTopReader(filter nostr.Filter, c *charge, ordered bool) *topReader {
	return &topReader{sieve: sieve{filter: filter, now: nostr.Now()}, limit: filter.Limit, ordered: ordered,
		charge: c, hits: make(hitHeap, 0, min(filter.Limit, 16))}
}

// visit is the lmdbw.Visit of the walk.
func (r *topReader) visit(ts uint32, raw []byte) bool {
	if len(raw) < 138 {
		r.failed = errRecord
		return false
	}
	if r.after.passed(ts, raw) {
		return true
	}
	if !r.full {
		return r.add(ts, raw)
	}
	w := r.hits[r.worst]
	if r.ordered && ts < w.ts {
		return false // older than every hit, and so is everything after it
	}
	if ts == w.ts {
		if r.ties++; r.ties > maxTieCandidates {
			return false
		}
	}
	if ts < w.ts || (ts == w.ts && !idBelow(raw, w.id)) {
		return true
	}
	return r.replace(ts, raw)
}

// add decodes a candidate while the answer is not full.
func (r *topReader) add(ts uint32, raw []byte) bool {
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
	h.ts, h.id = ts, h.evt.ID
	if err := r.charge.grow(h.size()); err != nil {
		r.dec.rollback(m)
		if err == errBusy {
			r.failed = err
			return false
		}
		r.cut = true
		r.fill() // full at its ceiling: the candidate competes as a tie
		return r.visit(ts, raw)
	}
	r.hits = append(r.hits, h)
	if len(r.hits) >= r.limit {
		r.fill()
	}
	return true
}

// fill marks the answer full at what it holds. The hits are in walk
// order, so the worst is the highest id of the last second, found at the
// tail; they become a heap only when a candidate replaces one (an id
// plan, in no order, is a heap at once).
func (r *topReader) fill() {
	r.limit, r.full = len(r.hits), len(r.hits) > 0
	if !r.ordered {
		r.heapify()
		return
	}
	last := len(r.hits) - 1
	r.worst = last
	for i := last - 1; i >= 0 && r.hits[i].ts == r.hits[last].ts; i-- {
		if r.hits[i].id > r.hits[r.worst].id {
			r.worst = i
		}
	}
}

// heapify turns the hits into a heap, the worst on top.
func (r *topReader) heapify() {
	if !r.heaped {
		r.hits.init()
		r.heaped, r.worst = true, 0
	}
}

// replace puts a candidate that sorts before the worst hit in its place,
// if it matches.
func (r *topReader) replace(ts uint32, raw []byte) bool {
	evt, err := r.viewer.View(raw)
	if err != nil {
		r.failed = err
		return false
	}
	if !r.keep(evt, raw) {
		return true
	}
	r.heapify()
	r.hits[0] = hit{ts: ts, id: hex.EncodeToString(raw[:32])}
	r.hits.fix()
	r.replaced = true
	return true
}

// sieve decides which decoded candidates belong in an answer.
type sieve struct {
	filter  nostr.Filter
	now     nostr.Timestamp
	expired []*nostr.Event // set apart for purging, at most maxPurgePerQuery
}

// keep reports whether evt belongs in the answer; an expired one is set
// apart for purging.
func (r *sieve) keep(evt *nostr.Event, raw []byte) bool {
	if isExpired(evt, r.now) {
		if len(r.expired) < maxPurgePerQuery {
			if owned, err := lmdbw.Decode(raw); err == nil {
				r.expired = append(r.expired, owned)
			}
		}
		return false
	}
	return r.filter.Matches(evt)
}

// sorted is the hits in NIP-01's order.
func (r *topReader) sorted() []hit {
	hits := []hit(r.hits)
	slices.SortFunc(hits, func(a, b hit) int {
		return cmp.Or(cmp.Compare(b.ts, a.ts), cmp.Compare(a.id, b.id))
	})
	return hits
}

// idBelow reports whether raw's id sorts before id (lowercase hex, whose
// order is the bytes' order).
func idBelow(raw []byte, id string) bool {
	var buf [64]byte
	return string(hexID32(buf[:], raw)) < id
}

// idAbove reports whether raw's id sorts after id.
func idAbove(raw []byte, id string) bool {
	var buf [64]byte
	return string(hexID32(buf[:], raw)) > id
}

// hexID32 writes the hex of raw's id (its first 32 bytes) into buf (64 bytes).
func hexID32(buf, raw []byte) []byte {
	hex.Encode(buf, raw[:32])
	return buf
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
