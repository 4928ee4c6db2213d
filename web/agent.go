package web

import (
	"context"
	"net/http"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/relay"
)

// agentData is an agent's page.
type agentData struct {
	ID      string
	Name    string
	Agent   directory.Agent
	Known   bool // the directory lists it
	Metrics directory.Metrics
	// Verification is the two-way owner check and the events it rests on.
	Verification relay.Verification
	Definition   *events.Definition // nil when not on this node
	Lessons      []lessonRow
	Judged       bool // the lessons carry this node's trust decisions (the agent runs here)
}

// lessonRow is one lesson with the trust decision, when judged.
type lessonRow struct {
	*events.Lesson
	Judged  bool
	Applied bool
	Rule    string
	Reason  string
}

// maxLessons bounds the lessons one page lists.
const maxLessons = 200

// agentPage renders /agents/{id} (hex or npub).
func (s *Site) agentPage(r *http.Request) (view, error) {
	ctx := r.Context()
	id, err := events.ParsePubKey(r.PathValue("id"))
	if err != nil {
		return notFound("There is no such agent: the address does not hold a public key."), nil
	}
	d := agentData{ID: id}
	if s.cfg.Directory != nil {
		d.Agent, d.Known = s.cfg.Directory.Get(id)
		d.Metrics, _ = s.cfg.Directory.Metrics(id)
	}
	if d.Verification, err = relay.VerifyAgent(ctx, s.cfg.Store, id); err != nil {
		return view{}, err
	}
	if !d.Known && d.Verification.Events.Profile == nil {
		return notFound("This node knows no agent with that key."), nil
	}
	d.Name = agentName(d)
	if d.Definition, err = s.definition(ctx, definitionOf(d)); err != nil {
		return view{}, err
	}
	if d.Lessons, d.Judged, err = s.lessonsOf(ctx, id, d.Definition); err != nil {
		return view{}, err
	}
	return view{name: "agent", title: d.Name, data: d}, nil
}

// agentName is the directory's name, else the profile's, else the npub.
func agentName(d agentData) string {
	if d.Agent.Name != "" {
		return d.Agent.Name
	}
	if evt := d.Verification.Events.Profile; evt != nil {
		if p, err := events.ParseProfile(evt); err == nil && p.Name != "" {
			return p.Name
		}
	}
	return short(npub(d.ID))
}

// definitionOf is the definition the agent runs: the directory's, else
// the one its profile names.
func definitionOf(d agentData) string {
	if d.Agent.DefinitionID != "" {
		return d.Agent.DefinitionID
	}
	if evt := d.Verification.Events.Profile; evt != nil {
		if p, err := events.ParseProfile(evt); err == nil {
			return p.DefinitionID
		}
	}
	return ""
}

// definition reads one definition by id (nil when absent or malformed).
func (s *Site) definition(ctx context.Context, id string) (*events.Definition, error) {
	if !events.IsHex64(id) {
		return nil, nil
	}
	evts, err := s.cfg.Store.QuerySync(ctx, nostr.Filter{IDs: []string{id}, Kinds: []int{events.KindDefinition}, Limit: 1})
	if err != nil || len(evts) == 0 {
		return nil, err
	}
	def, err := events.ParseDefinition(evts[0])
	if err != nil {
		return nil, nil
	}
	return def, nil
}

// lessonsOf lists the lessons on def, newest first, with this node's
// trust decision for agent when the agent runs here (judged).
func (s *Site) lessonsOf(ctx context.Context, agent string, def *events.Definition) ([]lessonRow, bool, error) {
	if def == nil {
		return nil, false, nil
	}
	rows, err := s.definitionLessons(ctx, def.ID)
	if err != nil || s.cfg.Lessons == nil {
		return rows, false, err
	}
	eff, err := s.cfg.Lessons.Effective(ctx, agent)
	if err != nil { // not an agent of this node: no decision to show
		return rows, false, nil
	}
	byID := map[string]int{}
	for i, row := range rows {
		byID[row.ID] = i
	}
	for _, lv := range eff.Lessons {
		if i, ok := byID[lv.ID]; ok {
			rows[i].Judged, rows[i].Applied, rows[i].Rule, rows[i].Reason = true, lv.Applied, lv.Rule, lv.Reason
		}
	}
	return rows, true, nil
}

// definitionLessons reads the lessons that reference definition id.
func (s *Site) definitionLessons(ctx context.Context, id string) ([]lessonRow, error) {
	evts, err := s.cfg.Store.QuerySync(ctx, nostr.Filter{Kinds: []int{events.KindLesson},
		Tags: nostr.TagMap{"e": {id}}, Limit: maxLessons})
	if err != nil {
		return nil, err
	}
	rows := make([]lessonRow, 0, len(evts))
	for _, evt := range evts {
		if l, err := events.ParseLesson(evt); err == nil {
			rows = append(rows, lessonRow{Lesson: l})
		}
	}
	return rows, nil
}
