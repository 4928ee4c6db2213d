package web

import (
	"context"
	"net/http"
	"strconv"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/events"
)

// directoryData is the index page: a page of agents (ranked) and a page
// of definitions (newest first).
type directoryData struct {
	Agents      []agentRow
	AgentsTotal int
	AgentsFrom  int // 1-based position of the first listed agent
	AgentsPrev  int // offset of the previous page, -1 if none
	AgentsNext  int // offset of the next page, -1 if none

	Definitions []definitionRow
	DefsNext    *Cursor // the next page of definitions, nil if none
	DefsFirst   bool    // the first page of definitions
}

// agentRow is one agent in a list.
type agentRow struct {
	directory.Agent
	DefinitionTitle string
}

// definitionRow is one definition in a list.
type definitionRow struct {
	*events.Definition
	Agents    int // agents the directory knows running this version
	Available int // of which available now
}

// directoryPage renders / (query: agents=<offset>, until=<ts>&skip=<n>).
func (s *Site) directoryPage(r *http.Request) (view, error) {
	ctx := r.Context()
	all := s.agents(directory.Query{IncludeUnavailable: true, Limit: -1})
	d := directoryData{AgentsTotal: len(all), AgentsPrev: -1, AgentsNext: -1}
	off := atoiRange(r.FormValue("agents"), 0, len(all))
	end := min(off+s.cfg.PageSize, len(all))
	d.AgentsFrom = off + 1
	if off > 0 {
		d.AgentsPrev = max(off-s.cfg.PageSize, 0)
	}
	if end < len(all) {
		d.AgentsNext = end
	}
	rows, err := s.agentRows(ctx, all[off:end])
	if err != nil {
		return view{}, err
	}
	d.Agents = rows
	cur := parseCursor(r)
	d.DefsFirst = cur.until == 0
	defs, next, err := s.definitionsAt(ctx, cur)
	if err != nil {
		return view{}, err
	}
	d.Definitions, d.DefsNext = definitionRows(defs, all), next.link()
	return view{name: "index", title: "Directory", data: d}, nil
}

// agents searches the directory (none without one).
func (s *Site) agents(q directory.Query) []directory.Agent {
	if s.cfg.Directory == nil {
		return nil
	}
	return s.cfg.Directory.Search(q)
}

// agentRows adds each agent's definition title, read in one query.
func (s *Site) agentRows(ctx context.Context, agents []directory.Agent) ([]agentRow, error) {
	var ids []string
	for _, a := range agents {
		if events.IsHex64(a.DefinitionID) {
			ids = append(ids, a.DefinitionID)
		}
	}
	titles := map[string]string{}
	if len(ids) > 0 {
		evts, err := s.cfg.Store.QuerySync(ctx, nostr.Filter{IDs: ids, Kinds: []int{events.KindDefinition}, Limit: len(ids)})
		if err != nil {
			return nil, err
		}
		for _, evt := range evts {
			if def, err := events.ParseDefinition(evt); err == nil {
				titles[def.ID] = def.Title
			}
		}
	}
	rows := make([]agentRow, len(agents))
	for i, a := range agents {
		rows[i] = agentRow{Agent: a, DefinitionTitle: titles[a.DefinitionID]}
	}
	return rows, nil
}

// definitionRows counts, for each definition, the agents running it.
func definitionRows(defs []*events.Definition, agents []directory.Agent) []definitionRow {
	type count struct{ all, up int }
	counts := map[string]count{}
	for _, a := range agents {
		c := counts[a.DefinitionID]
		c.all++
		if a.Available {
			c.up++
		}
		counts[a.DefinitionID] = c
	}
	rows := make([]definitionRow, len(defs))
	for i, def := range defs {
		c := counts[def.ID]
		rows[i] = definitionRow{Definition: def, Agents: c.all, Available: c.up}
	}
	return rows
}

// atoiRange parses s as an int in [lo, hi]; anything else is lo.
func atoiRange(s string, lo, hi int) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return lo
	}
	return n
}
