package web

import (
	"context"
	"net/http"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
)

// lessonsPage renders /lessons: the newest lessons on every definition,
// a page at a time (?until=&skip=, as a definition's lessons).
func (s *Site) lessonsPage(r *http.Request) (view, error) {
	p, err := s.lessonPageOf(r.Context(), "", parseLessonCursor(r))
	if err != nil {
		return view{}, err
	}
	return view{name: "lessons", title: "Recent lessons", data: p}, nil
}

// lessonData is a lesson's own page: the lesson whole and the newest of
// its comments.
type lessonData struct {
	*events.Lesson
	Comments []*events.Comment // newest first, at most MaxComments
	More     bool              // there are older comments than those listed
}

// MaxComments bounds the comments a lesson's page lists (newest first),
// each cut to MaxLessonRunes like a lesson in a list.
const MaxComments = 50

// commentsOn reads the newest NIP-22 comments whose root is lesson id.
func (s *Site) commentsOn(ctx context.Context, id string) ([]*events.Comment, bool, error) {
	evts, err := s.cfg.Store.QuerySync(ctx, nostr.Filter{Kinds: []int{events.KindComment},
		Tags: nostr.TagMap{"E": {id}}, Limit: MaxComments + 1})
	if err != nil {
		return nil, false, err
	}
	more := len(evts) > MaxComments
	out := make([]*events.Comment, 0, min(len(evts), MaxComments))
	for _, evt := range evts[:min(len(evts), MaxComments)] {
		if c, err := events.ParseComment(evt); err == nil && c.RootID == id {
			out = append(out, c)
		}
	}
	return out, more, nil
}
