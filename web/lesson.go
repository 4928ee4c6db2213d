package web

import (
	"net/http"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
)

// lessonView renders /lessons/{id}: one lesson whole (lists show each
// lesson cut to MaxLessonRunes, with a link here) and its comments.
func (s *Site) lessonView(r *http.Request) (view, error) {
	id := r.PathValue("id")
	if !events.IsHex64(id) {
		return notFound("There is no such lesson: the address does not hold an event id."), nil
	}
	evts, err := s.cfg.Store.QuerySync(r.Context(), nostr.Filter{IDs: []string{id}, Kinds: []int{events.KindLesson}, Limit: 1})
	if err != nil {
		return view{}, err
	}
	if len(evts) == 0 {
		return notFound("This node holds no lesson with that id."), nil
	}
	l, err := events.ParseLesson(evts[0])
	if err != nil {
		return notFound("The event with that id is not a valid lesson."), nil
	}
	d := lessonData{Lesson: l}
	if d.Comments, d.More, err = s.commentsOn(r.Context(), id); err != nil {
		return view{}, err
	}
	return view{name: "lesson", title: clip(maxTitle, l.Title), data: d}, nil
}
