package lessons_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/lessons"
	"github.com/nbd-wtf/go-nostr"
)

// Queries are batched: their number does not grow with the number of
// lessons, comments or authors (below a batch).
func TestGather_batched(t *testing.T) {
	s := newScene(t)
	owners := []key{s.owner, testkit.NewKey(t), testkit.NewKey(t)}
	for i := range 60 {
		sib := s.sibling(owners[i%3])
		l := s.lesson(sib, "t", "x")
		s.comment(owners[i%3], l, "c")
	}
	s.follows(s.owner, owners[1].PK)
	q := &countingQuerier{q: s.r}
	ev, err := lessons.Gather(context.Background(), q, s.subject())
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.Lessons) != 60 || len(ev.Comments) != 60 || len(ev.Profiles) != 60 || len(ev.Claims) != 3 || len(ev.Contacts) != 1 || ev.Truncated {
		t.Errorf("lessons %d comments %d profiles %d claims %d contacts %d truncated %v",
			len(ev.Lessons), len(ev.Comments), len(ev.Profiles), len(ev.Claims), len(ev.Contacts), ev.Truncated)
	}
	// lessons (naming the definition, and the agent's own), comments (E
	// and e), deletions, profiles, claims, contacts
	if q.queries != 8 {
		t.Errorf("%d queries for 60 lessons, want 8", q.queries)
	}
	eff := lessons.Compose(s.def, nil, lessons.DefaultPolicy().Evaluate(s.subject(), ev))
	applied := 0
	for _, l := range eff.Lessons {
		if l.Applied {
			applied++
		}
	}
	if applied != 20 {
		t.Errorf("%d lessons applied, want the 20 of siblings sharing the owner", applied)
	}
}

// memScene signs events for a memQuerier with chosen timestamps.
type memScene struct {
	t   *testing.T
	def *events.Definition
	m   *memQuerier
}

func newMemScene(t *testing.T) *memScene {
	return &memScene{t: t, def: &events.Definition{ID: hex64("d"), PubKey: hex64("e"), Title: "T"}, m: &memQuerier{}}
}

func hex64(c string) string { return strings.Repeat(c, 64) }

func (ms *memScene) add(k key, at nostr.Timestamp, tmpl nostr.Event) *nostr.Event {
	tmpl.CreatedAt = at
	if err := tmpl.Sign(k.SK); err != nil {
		ms.t.Fatal(err)
	}
	ms.m.evts = append(ms.m.evts, &tmpl)
	return &tmpl
}

func (ms *memScene) lesson(k key, at nostr.Timestamp) *nostr.Event {
	text := fmt.Sprint("lesson ", len(ms.m.evts)) // distinct ids within one second
	return ms.add(k, at, (&events.Lesson{DefinitionID: ms.def.ID, Title: "t", Content: text}).Template())
}

func (ms *memScene) gather(lim lessons.Limits) *lessons.Evidence {
	ev, err := lessons.GatherLimited(context.Background(), ms.m, lessons.Subject{Agent: hex64("a"), Definition: ms.def}, lim)
	if err != nil {
		ms.t.Fatal(err)
	}
	return ev
}

func TestGather_pages(t *testing.T) {
	ms := newMemScene(t)
	k := testkit.NewKey(t)
	for i := range 30 {
		ms.lesson(k, nostr.Timestamp(1000+i/2)) // pairs share a second
	}
	ev := ms.gather(lessons.Limits{Page: 7})
	if len(ev.Lessons) != 30 || ev.Truncated {
		t.Errorf("paged: %d lessons, truncated %v", len(ev.Lessons), ev.Truncated)
	}
	ev = ms.gather(lessons.Limits{Page: 7, MaxLessons: 10})
	if len(ev.Lessons) != 10 || !ev.Truncated || ev.Lessons[0].CreatedAt != 1014 {
		t.Errorf("capped: %d lessons, truncated %v", len(ev.Lessons), ev.Truncated)
	}
}

// More events in one second than a page holds are all read (the walk
// goes on within the second by the ids it read), and the older ones.
func TestGather_samesecondPileUp(t *testing.T) {
	ms := newMemScene(t)
	k := testkit.NewKey(t)
	for range 10 {
		ms.lesson(k, 1000)
	}
	ms.lesson(k, 999)
	ev := ms.gather(lessons.Limits{Page: 4})
	if ev.Truncated || len(ev.Lessons) != 11 {
		t.Errorf("%d lessons, truncated %v; want all 11, not truncated", len(ev.Lessons), ev.Truncated)
	}
}

// Lenient NIP-22 shapes are found: a comment whose root is an "e" marked
// "root" (no "E").
func TestGather_lenientComment(t *testing.T) {
	ms := newMemScene(t)
	k := testkit.NewKey(t)
	l := ms.lesson(k, 1000)
	c := ms.add(k, 1001, nostr.Event{Kind: events.KindComment, Tags: nostr.Tags{{"K", "4129"}, {"e", l.ID, "", "root"}}, Content: "lenient"})
	ev := ms.gather(lessons.Limits{})
	if len(ev.Comments) != 1 || ev.Comments[0].ID != c.ID {
		t.Fatalf("comments: %v", ev.Comments)
	}
}

func TestGather_noDefinition(t *testing.T) {
	_, err := lessons.Gather(context.Background(), &memQuerier{}, lessons.Subject{})
	if !errors.Is(err, lessons.ErrNoDefinition) {
		t.Errorf("got %v", err)
	}
}

type failingQuerier struct{ err error }

func (f failingQuerier) QuerySync(context.Context, nostr.Filter) ([]*nostr.Event, error) {
	return nil, f.err
}

func TestGather_queryError(t *testing.T) {
	boom := errors.New("boom")
	_, err := lessons.Gather(context.Background(), failingQuerier{boom}, lessons.Subject{Definition: &events.Definition{ID: hex64("d")}})
	if !errors.Is(err, boom) {
		t.Errorf("got %v", err)
	}
}
