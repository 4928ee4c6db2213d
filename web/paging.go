package web

import (
	"context"
	"net/http"
	"strconv"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/events"
)

// parseCursor reads the directory's ?until=<ts>&after=<id>; anything
// malformed is the first page.
func parseCursor(r *http.Request) directory.DefCursor {
	ts, err := strconv.ParseInt(r.FormValue("until"), 10, 64)
	after := r.FormValue("after")
	if err != nil || ts <= 0 || !events.IsHex64(after) {
		return directory.DefCursor{}
	}
	return directory.DefCursor{Until: nostr.Timestamp(ts), After: after}
}

// cursor is where a page of lessons starts: events created at or before
// until, skipping the first skip of those created exactly at until (they
// were on the previous page). until 0 is the first page.
type cursor struct {
	until nostr.Timestamp
	skip  int
}

// Lessons are read from the store a page at a time.
const (
	// LessonPage is how many lessons a page lists.
	LessonPage = 20
	// maxSkip bounds a cursor's skip: a page reads at most maxSkip +
	// LessonPage + 1 events. Past that many lessons in one second, the next
	// page starts at the second before (docs/WEB.md#bounds).
	maxSkip = 200
)

// parseLessonCursor reads ?until=<ts>&skip=<n>; anything malformed is the
// first page.
func parseLessonCursor(r *http.Request) cursor {
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

// lessonsAt reads one page of the lessons on definition id (every
// lesson when id is ""), newest first, and the cursor of the next page
// (zero when this is the last).
func (s *Site) lessonsAt(ctx context.Context, id string, cur cursor) ([]lessonRow, cursor, error) {
	f := nostr.Filter{Kinds: []int{events.KindLesson}, Limit: cur.skip + LessonPage + 1}
	if id != "" {
		f.Tags = nostr.TagMap{"e": {id}}
	}
	if cur.until != 0 {
		until := cur.until
		f.Until = &until
	}
	evts, err := s.cfg.Store.QuerySync(ctx, f)
	if err != nil {
		return nil, cursor{}, err
	}
	evts = skipAt(evts, cur)
	more := len(evts) > LessonPage
	evts = evts[:min(len(evts), LessonPage)]
	rows := make([]lessonRow, 0, len(evts))
	for _, evt := range evts {
		if l, err := events.ParseLesson(evt); err == nil {
			rows = append(rows, lessonRow{Lesson: l})
		}
	}
	if !more || len(evts) == 0 {
		return rows, cursor{}, nil
	}
	return rows, nextCursor(evts, cur), nil
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
// Past maxSkip it starts at the second before.
func nextCursor(shown []*nostr.Event, cur cursor) cursor {
	last := shown[len(shown)-1].CreatedAt
	next := cursor{until: last}
	for i := len(shown) - 1; i >= 0 && shown[i].CreatedAt == last; i-- {
		next.skip++
	}
	if last == cur.until {
		next.skip += cur.skip
	}
	if next.skip > maxSkip {
		return cursor{until: last - 1}
	}
	return next
}
