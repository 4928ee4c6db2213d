package web

import (
	"context"
	"net/http"
	"strconv"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
)

// cursor is where a page of definitions starts: events created at or
// before until, skipping the first skip of those created exactly at until
// (they were on the previous page). until 0 is the first page.
type cursor struct {
	until nostr.Timestamp
	skip  int
}

// maxSkip bounds a cursor's skip (a crafted one cannot make a page read
// the whole store).
const maxSkip = 5000

// parseCursor reads ?until=<ts>&skip=<n>; anything malformed is the first page.
func parseCursor(r *http.Request) cursor {
	ts, err := strconv.ParseInt(r.FormValue("until"), 10, 64)
	if err != nil || ts <= 0 {
		return cursor{}
	}
	return cursor{until: nostr.Timestamp(ts), skip: atoiRange(r.FormValue("skip"), 0, maxSkip)}
}

// Cursor is a page link's ?until=&skip= (the template writes it).
type Cursor struct {
	Until int64
	Skip  int
}

// link is the cursor for a template (nil for none).
func (c cursor) link() *Cursor {
	if c.until == 0 {
		return nil
	}
	return &Cursor{Until: int64(c.until), Skip: c.skip}
}

// definitionsAt reads one page of definitions, newest first, and the
// cursor of the next page (zero when this is the last).
func (s *Site) definitionsAt(ctx context.Context, cur cursor) ([]*events.Definition, cursor, error) {
	size := s.cfg.PageSize
	f := nostr.Filter{Kinds: []int{events.KindDefinition}, Limit: cur.skip + size + 1}
	if cur.until != 0 {
		until := cur.until
		f.Until = &until
	}
	evts, err := s.cfg.Store.QuerySync(ctx, f)
	if err != nil {
		return nil, cursor{}, err
	}
	evts = skipAt(evts, cur)
	more := len(evts) > size
	evts = evts[:min(len(evts), size)]
	defs := make([]*events.Definition, 0, len(evts))
	for _, evt := range evts {
		if def, err := events.ParseDefinition(evt); err == nil {
			defs = append(defs, def)
		}
	}
	if !more || len(evts) == 0 {
		return defs, cursor{}, nil
	}
	return defs, nextCursor(evts, cur), nil
}

// skipAt drops the events of cur.until that the previous page showed.
func skipAt(evts []*nostr.Event, cur cursor) []*nostr.Event {
	n := 0
	for n < len(evts) && n < cur.skip && evts[n].CreatedAt == cur.until {
		n++
	}
	return evts[n:]
}

// nextCursor starts after the last shown event: at its timestamp,
// skipping every shown event of that timestamp (and those cur skipped).
func nextCursor(shown []*nostr.Event, cur cursor) cursor {
	last := shown[len(shown)-1].CreatedAt
	next := cursor{until: last}
	for i := len(shown) - 1; i >= 0 && shown[i].CreatedAt == last; i-- {
		next.skip++
	}
	if last == cur.until {
		next.skip += cur.skip
	}
	return next
}
