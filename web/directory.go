package web

import (
	"net/http"
	"strconv"

	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/events"
)

// directoryData is the index page: a page of agents (ranked) and a page
// of definitions (newest first), both read from the directory's index.
type directoryData struct {
	Agents      []agentRow
	AgentsTotal int
	AgentsFrom  int // 1-based position of the first listed agent
	AgentsPrev  int // offset of the previous page, -1 if none
	AgentsNext  int // offset of the next page, -1 if none

	Definitions []definitionRow
	DefsTotal   int
	DefsNext    *directory.DefCursor // the next page of definitions, nil if none
	DefsFirst   bool                 // the first page of definitions

	Teams []*events.Team // the newest teams (kind 34199), teams.go
}

// agentRow is one agent in a list.
type agentRow struct {
	directory.Agent
	DefinitionTitle string
}

// definitionRow is one definition in a list.
type definitionRow struct {
	directory.Definition
	directory.Running // agents the directory knows running this version
}

// maxAgentOffset bounds ?agents= (a page past it is the last one).
const maxAgentOffset = 1_000_000

// directoryPage renders / (query: agents=<offset>, until=<ts>&after=<id>).
// It reads nothing but the directory's index: a page costs the same
// however many events share a second or however large they are.
func (s *Site) directoryPage(r *http.Request) (view, error) {
	d := directoryData{AgentsPrev: -1, AgentsNext: -1}
	off := atoiRange(r.FormValue("agents"), 0, maxAgentOffset)
	if s.cfg.Directory != nil {
		s.agentPage0(&d, off)
		s.definitionPage0(&d, parseCursor(r))
	}
	d.Teams = s.teamsOf(r.Context())
	return view{name: "index", title: "Directory", data: d}, nil
}

// agentPage0 fills d with the page of agents at offset off.
func (s *Site) agentPage0(d *directoryData, off int) {
	agents, total := s.cfg.Directory.SearchPage(directory.Query{IncludeUnavailable: true, Limit: s.cfg.PageSize, Offset: off})
	d.AgentsTotal, d.AgentsFrom = total, min(off, total)+1
	if off > 0 {
		d.AgentsPrev = max(min(off, total)-s.cfg.PageSize, 0)
	}
	if end := off + len(agents); end < total {
		d.AgentsNext = end
	}
	d.Agents = make([]agentRow, len(agents))
	for i, a := range agents {
		d.Agents[i] = agentRow{Agent: a}
		if def, ok := s.cfg.Directory.Definition(a.DefinitionID); ok {
			d.Agents[i].DefinitionTitle = def.Title
		}
	}
}

// definitionPage0 fills d with the page of definitions at cur.
func (s *Site) definitionPage0(d *directoryData, cur directory.DefCursor) {
	defs, next := s.cfg.Directory.Definitions(cur, s.cfg.PageSize)
	d.DefsFirst, d.DefsTotal = cur.IsZero(), s.cfg.Directory.DefinitionCount()
	if !next.IsZero() {
		d.DefsNext = &next
	}
	d.Definitions = make([]definitionRow, len(defs))
	for i, def := range defs {
		d.Definitions[i] = definitionRow{Definition: def, Running: s.cfg.Directory.RunningOf(def.ID)}
	}
}

// agents searches the directory (none without one).
func (s *Site) agents(q directory.Query) []directory.Agent {
	if s.cfg.Directory == nil {
		return nil
	}
	return s.cfg.Directory.Search(q)
}

// atoiRange parses s as an int in [lo, hi]; anything else is lo.
func atoiRange(s string, lo, hi int) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return lo
	}
	return n
}
