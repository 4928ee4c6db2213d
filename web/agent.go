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
	MoreReviews  int                // reviews beyond the maxReviews listed
	lessonPage
	Judged bool   // the lessons carry this node's trust decisions (the agent runs here)
	Files  []File // the definition's files in the agent's home (files.go)
}

// lessonRow is one lesson with the trust decision, when judged.
type lessonRow struct {
	*events.Lesson
	Judged  bool
	Applied bool
	Rule    string
	Reason  string
}

// maxReviews bounds the reviews an agent's page lists (newest first).
const maxReviews = 50

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
		if n := len(d.Metrics.Reviews); n > maxReviews {
			d.Metrics.Reviews, d.MoreReviews = d.Metrics.Reviews[:maxReviews], n-maxReviews
		}
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
	if err = s.lessonsOf(ctx, &d, parseLessonCursor(r)); err != nil {
		return view{}, err
	}
	s.filesOf(ctx, &d)
	return view{name: "agent", title: clip(maxTitle, d.Name), data: d}, nil
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

// lessonsOf reads the page of lessons at cur on the agent's definition,
// newest first, with this node's trust decision when the agent runs here
// (judged).
func (s *Site) lessonsOf(ctx context.Context, d *agentData, cur cursor) error {
	if d.Definition == nil {
		return nil
	}
	var err error
	if d.lessonPage, err = s.lessonPageOf(ctx, d.Definition.ID, cur); err != nil || s.cfg.Lessons == nil {
		return err
	}
	eff, err := s.cfg.Lessons.Effective(ctx, d.ID)
	if err != nil { // not an agent of this node: no decision to show
		return nil
	}
	byID := map[string]int{}
	for i, row := range d.Lessons {
		byID[row.ID] = i
	}
	for _, lv := range eff.Lessons {
		if i, ok := byID[lv.ID]; ok {
			rows := d.Lessons
			rows[i].Judged, rows[i].Applied, rows[i].Rule, rows[i].Reason = true, lv.Applied, lv.Rule, lv.Reason
		}
	}
	d.Judged = true
	return nil
}
