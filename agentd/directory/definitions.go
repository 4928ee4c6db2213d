package directory

import (
	"cmp"
	"slices"
	"strings"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
)

// Definition is what the directory keeps of a definition (kind 4199):
// its id, author, time and the short fields a list shows, each bounded
// (compact.go). The whole event is in the store.
type Definition struct {
	ID        string          `json:"id"`
	PubKey    string          `json:"pubkey"`
	CreatedAt nostr.Timestamp `json:"createdAt"`
	Title     string          `json:"title"`
	Role      string          `json:"role,omitempty"`
	Version   string          `json:"version,omitempty"`
	Tools     []string        `json:"tools,omitempty"`
}

// summarize is def's bounded summary.
func summarize(def *events.Definition) *Definition {
	return &Definition{ID: keep(def.ID), PubKey: keep(def.PubKey), CreatedAt: def.CreatedAt,
		Title: clipRunes(def.Title, MaxNameRunes), Role: clipRunes(def.Role, MaxTextRunes),
		Version: clipRunes(def.Version, maxVersionRune), Tools: clipList(def.Tools)}
}

// DefCursor is where a page of definitions starts: after the definition
// (CreatedAt, ID) in the directory's order, newest first and ties by id
// ascending (NIP-01's order). The zero cursor is the first page.
type DefCursor struct {
	Until nostr.Timestamp
	After string
}

// IsZero reports whether c is the first page.
func (c DefCursor) IsZero() bool { return c.Until == 0 && c.After == "" }

// defOrder is the directory's order of definitions.
func defOrder(a, b *Definition) int {
	return cmp.Or(cmp.Compare(b.CreatedAt, a.CreatedAt), strings.Compare(a.ID, b.ID))
}

// addDefinition indexes def once (a definition is immutable), in order:
// the load reads newest first, so its inserts land at the end; a new
// definition lands near the front (a copy of the list's pointers).
func (d *Directory) addDefinition(def *events.Definition) {
	if d.defs[def.ID] != nil {
		return
	}
	s := summarize(def)
	d.defs[s.ID] = s
	i, _ := slices.BinarySearchFunc(d.defList, s, defOrder)
	d.defList = slices.Insert(d.defList, i, s)
}

// Definitions returns up to n definitions after cur, newest first, and the
// cursor of the next page (zero when there is none), in O(log N + n).
func (d *Directory) Definitions(cur DefCursor, n int) ([]Definition, DefCursor) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	i := 0
	if !cur.IsZero() {
		at := &Definition{CreatedAt: cur.Until, ID: cur.After}
		var found bool
		i, found = slices.BinarySearchFunc(d.defList, at, defOrder)
		if found {
			i++
		}
	}
	end := min(i+max(n, 0), len(d.defList))
	out := make([]Definition, 0, end-i)
	for _, s := range d.defList[i:end] {
		out = append(out, s.clone())
	}
	if end >= len(d.defList) || len(out) == 0 {
		return out, DefCursor{}
	}
	last := out[len(out)-1]
	return out, DefCursor{Until: last.CreatedAt, After: last.ID}
}

// DefinitionCount is how many definitions the directory indexes.
func (d *Directory) DefinitionCount() int {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return len(d.defList)
}

// Definition returns the summary of the definition with event id id.
func (d *Directory) Definition(id string) (Definition, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	s := d.defs[id]
	if s == nil {
		return Definition{}, false
	}
	return s.clone(), true
}

func (s *Definition) clone() Definition {
	c := *s
	c.Tools = slices.Clone(s.Tools)
	return c
}

// Running is how many listed agents run a definition, and how many of
// them are available now.
type Running struct {
	Agents    int
	Available int
}

// RunningOf counts the listed agents whose profile names definition id.
func (d *Directory) RunningOf(id string) Running {
	now := d.cfg.Now()
	d.mu.RLock()
	defer d.mu.RUnlock()
	var r Running
	for agent := range d.byDef[id] {
		if e := d.agents[agent]; e != nil && e.known() {
			r.Agents++
			if e.available(now, d.cfg.HeartbeatTTL) {
				r.Available++
			}
		}
	}
	return r
}

// AgentsOf returns up to n of the listed agents running definition id,
// best first (the ranking of Search).
func (d *Directory) AgentsOf(id string, n int) []Agent {
	now := d.cfg.Now()
	d.mu.RLock()
	defer d.mu.RUnlock()
	var hits []hit
	for agent := range d.byDef[id] {
		if e := d.agents[agent]; e != nil && e.known() {
			hits = append(hits, hit{e: e, available: e.available(now, d.cfg.HeartbeatTTL)})
		}
	}
	for i := range hits {
		hits[i].rank = d.rank(&hits[i], 0)
	}
	return snapshots(topN(hits, n), now, d.cfg.HeartbeatTTL)
}
