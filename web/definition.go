package web

import (
	"net/http"

	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/events"
)

// definitionData is a definition's page.
type definitionData struct {
	Definition *events.Definition
	Agents     []directory.Agent // agents the directory knows running it
	Lessons    []lessonRow
}

// definitionPage renders /definitions/{id}.
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
	for _, a := range s.agents(directory.Query{IncludeUnavailable: true, Limit: -1}) {
		if a.DefinitionID == def.ID {
			d.Agents = append(d.Agents, a)
		}
	}
	if d.Lessons, err = s.definitionLessons(ctx, def.ID); err != nil {
		return view{}, err
	}
	return view{name: "definition", title: def.Title, data: d}, nil
}
