package web

import (
	"context"
	"net/http"

	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/events"
)

// definitionData is a definition's page.
type definitionData struct {
	Definition *events.Definition
	Agents     []directory.Agent // agents the directory knows running it, best first
	Running    directory.Running // how many in all
	lessonPage
}

// lessonPage is a page of lessons with its paging links.
type lessonPage struct {
	Lessons     []lessonRow
	LessonsNext *Cursor // the next page, nil if none
	LessonsMore bool    // not the first page
}

// maxAgentsListed bounds the agents a definition's page lists.
const maxAgentsListed = 50

// definitionPage renders /definitions/{id} (?until=&skip= pages its lessons).
func (s *Site) definitionPage(r *http.Request) (view, error) {
	ctx := r.Context()
	def, err := s.definition(ctx, r.PathValue("id"))
	if err != nil {
		return view{}, err
	}
	if def == nil {
		return notFound("This node holds no definition with that id."), nil
	}
	d := definitionData{Definition: def}
	if s.cfg.Directory != nil {
		d.Agents, d.Running = s.cfg.Directory.AgentsOf(def.ID, maxAgentsListed), s.cfg.Directory.RunningOf(def.ID)
	}
	if d.lessonPage, err = s.lessonPageOf(ctx, def.ID, parseLessonCursor(r)); err != nil {
		return view{}, err
	}
	return view{name: "definition", title: clip(maxTitle, def.Title), data: d}, nil
}

// lessonPageOf reads the page of lessons on definition id at cur.
func (s *Site) lessonPageOf(ctx context.Context, id string, cur cursor) (lessonPage, error) {
	rows, next, err := s.lessonsAt(ctx, id, cur)
	if err != nil {
		return lessonPage{}, err
	}
	return lessonPage{Lessons: rows, LessonsNext: next.link(), LessonsMore: cur.until != 0}, nil
}
