package web

import (
	"net/http"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/capabilities/registry"
	"github.com/agentnode/agentnode/events"
)

// searchData is the search page: NIP-50 matches among definitions,
// lessons and capability packages, and the directory's agents.
type searchData struct {
	Query       string
	Agents      []directory.Agent
	Definitions []*events.Definition
	Lessons     []*events.Lesson
	Packages    []registry.Entry
}

// SearchQuery fills the layout's search box.
func (d searchData) SearchQuery() string { return d.Query }

// searchLimit bounds the results of each kind.
const searchLimit = 25

// searchPage renders /search?q=.
func (s *Site) searchPage(r *http.Request) (view, error) {
	d := searchData{Query: query(r)}
	if d.Query == "" {
		return view{name: "search", title: "Search", data: d}, nil
	}
	ctx := r.Context()
	d.Agents = s.agents(directory.Query{Text: d.Query, IncludeUnavailable: true, Limit: searchLimit})
	for _, kind := range []int{events.KindDefinition, events.KindLesson} {
		evts, err := s.cfg.Store.QuerySync(ctx, nostr.Filter{Kinds: []int{kind}, Search: d.Query, Limit: searchLimit})
		if err != nil {
			return view{}, err
		}
		d.add(evts)
	}
	if s.cfg.Registry != nil {
		var err error
		if d.Packages, err = s.cfg.Registry.Search(ctx, d.Query, registry.Filters{Limit: searchLimit}); err != nil {
			return view{}, err
		}
	}
	return view{name: "search", title: "Search: " + d.Query, data: d}, nil
}

// add sorts matched events into definitions and lessons.
func (d *searchData) add(evts []*nostr.Event) {
	for _, evt := range evts {
		switch evt.Kind {
		case events.KindDefinition:
			if def, err := events.ParseDefinition(evt); err == nil {
				d.Definitions = append(d.Definitions, def)
			}
		case events.KindLesson:
			if l, err := events.ParseLesson(evt); err == nil {
				d.Lessons = append(d.Lessons, l)
			}
		}
	}
}
