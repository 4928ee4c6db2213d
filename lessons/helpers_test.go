package lessons_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/internal/testkit/testrelay"
	"github.com/agentnode/agentnode/lessons"
	"github.com/agentnode/agentnode/relay"
	"github.com/nbd-wtf/go-nostr"
)

// Both the embedded relay and a go-nostr websocket relay are Queriers.
var (
	_ lessons.Querier = (*relay.Relay)(nil)
	_ lessons.Querier = (*nostr.Relay)(nil)
)

// key is a keypair.
type key = testkit.Key

// scene is one trust scenario: a real relay holding a definition, an agent
// running it (verified owner link) and whatever the test adds.
type scene struct {
	t      testing.TB
	r      *relay.Relay
	clock  nostr.Timestamp
	def    *events.Definition
	defKey key
	agent  key
	owner  key
	owned  map[string][]string // owner pubkey -> agents listed in its 14199
}

func newScene(t testing.TB) *scene {
	t.Helper()
	r := testrelay.Open(t, relay.Config{Version: "test"})
	s := &scene{t: t, r: r, clock: nostr.Now() - 100_000, defKey: testkit.NewKey(t), agent: testkit.NewKey(t), owner: testkit.NewKey(t), owned: map[string][]string{}}
	d := &events.Definition{Title: "Code Reviewer", Role: "You review Go code.", Instructions: "Be brief.", Tools: []string{"read_file", "comment"}}
	def, err := events.ParseDefinition(s.publish(s.defKey, d.Template()))
	if err != nil {
		t.Fatal(err)
	}
	s.def = def
	s.agentOf(s.agent, s.owner.PK)
	s.claims(s.owner, s.agent.PK)
	return s
}

// publish signs tmpl with k (created_at strictly increasing) and stores it.
func (s *scene) publish(k key, tmpl nostr.Event) *nostr.Event {
	s.t.Helper()
	s.clock++
	evt := tmpl
	evt.CreatedAt = s.clock
	if err := evt.Sign(k.SK); err != nil {
		s.t.Fatal(err)
	}
	if err := s.r.Publish(context.Background(), &evt); err != nil {
		s.t.Fatalf("publish kind %d: %v", evt.Kind, err)
	}
	return &evt
}

// agentOf publishes k's agent profile: bot, e -> this definition, p -> owner ("" for none).
func (s *scene) agentOf(k key, owner string) { s.agentOfDef(k, s.def.ID, owner) }

// agentOfDef publishes k's agent profile naming definition defID.
func (s *scene) agentOfDef(k key, defID, owner string) {
	p := &events.Profile{Bot: true, DefinitionID: defID, Owner: owner, Name: "agent"}
	s.publish(k, p.Template())
}

// claims publishes owner's kind 14199 adding agents to those it listed.
func (s *scene) claims(owner key, agents ...string) {
	s.owned[owner.PK] = append(s.owned[owner.PK], agents...)
	c := &events.OwnerClaims{Agents: s.owned[owner.PK]}
	s.publish(owner, c.Template())
}

// follows publishes who's kind 3 following pubkeys.
func (s *scene) follows(who key, pubkeys ...string) {
	tags := nostr.Tags{}
	for _, pk := range pubkeys {
		tags = append(tags, nostr.Tag{"p", pk})
	}
	s.publish(who, nostr.Event{Kind: 3, Tags: tags})
}

// sibling makes a new agent of the definition owned by owner (verified).
func (s *scene) sibling(owner key) key {
	k := testkit.NewKey(s.t)
	s.agentOf(k, owner.PK)
	s.claims(owner, k.PK)
	return k
}

func (s *scene) lesson(k key, title, content string) *nostr.Event {
	l := &events.Lesson{DefinitionID: s.def.ID, Title: title, Category: "review", Content: content}
	return s.publish(k, l.Template())
}

func (s *scene) comment(k key, lesson *nostr.Event, content string) *nostr.Event {
	c := &events.Comment{RootID: lesson.ID, RootAuthor: lesson.PubKey, Content: content}
	return s.publish(k, c.Template())
}

func (s *scene) remove(k key, ids ...string) {
	tags := nostr.Tags{}
	for _, id := range ids {
		tags = append(tags, nostr.Tag{"e", id})
	}
	s.publish(k, nostr.Event{Kind: events.KindDeletion, Tags: tags})
}

func (s *scene) subject() lessons.Subject {
	return lessons.Subject{Agent: s.agent.PK, Owner: s.owner.PK, Definition: s.def}
}

// effective gathers from the relay, evaluates under p and composes.
func (s *scene) effective(p *lessons.Policy) lessons.Effective {
	s.t.Helper()
	return effectiveFrom(s.t, s.r, s.subject(), p)
}

func effectiveFrom(t testing.TB, q lessons.Querier, sub lessons.Subject, p *lessons.Policy) lessons.Effective {
	t.Helper()
	ev, err := lessons.Gather(context.Background(), q, sub)
	if err != nil {
		t.Fatal(err)
	}
	return lessons.Compose(sub.Definition, sub.Nudges, p.Evaluate(sub, ev))
}

func mustPolicy(t testing.TB, cfg lessons.Config) *lessons.Policy {
	t.Helper()
	p, err := lessons.NewPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// view finds the lesson id in eff.
func view(t testing.TB, eff lessons.Effective, id string) lessons.LessonView {
	t.Helper()
	i := slices.IndexFunc(eff.Lessons, func(l lessons.LessonView) bool { return l.ID == id })
	if i < 0 {
		t.Fatalf("lesson %s not listed in %+v", id, eff.Lessons)
	}
	return eff.Lessons[i]
}

// block returns the prompt's quoted block for the lesson id ("" if none).
func block(prompt, id string) string {
	begin := strings.Index(prompt, "===== BEGIN LESSON ")
	for begin >= 0 {
		end := strings.Index(prompt[begin:], "\n===== END LESSON ")
		if end < 0 {
			return ""
		}
		b := prompt[begin : begin+end]
		if strings.Contains(firstLine(b), "id "+id[:12]) {
			return b
		}
		next := strings.Index(prompt[begin+end+1:], "===== BEGIN LESSON ")
		if next < 0 {
			return ""
		}
		begin += end + 1 + next
	}
	return ""
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// memQuerier is a store that keeps everything (deleted events too), as a
// remote relay that ignores NIP-09 would: it lets tests see retractions.
type memQuerier struct {
	evts    []*nostr.Event
	queries int
}

func (m *memQuerier) QuerySync(_ context.Context, f nostr.Filter) ([]*nostr.Event, error) {
	m.queries++
	var out []*nostr.Event
	for _, evt := range m.evts {
		if f.Matches(evt) {
			out = append(out, evt)
		}
	}
	slices.SortStableFunc(out, func(a, b *nostr.Event) int { return int(b.CreatedAt) - int(a.CreatedAt) })
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// countingQuerier counts the queries made through it.
type countingQuerier struct {
	q       lessons.Querier
	queries int
}

func (c *countingQuerier) QuerySync(ctx context.Context, f nostr.Filter) ([]*nostr.Event, error) {
	c.queries++
	return c.q.QuerySync(ctx, f)
}
