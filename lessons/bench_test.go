package lessons_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/lessons"
	"github.com/nbd-wtf/go-nostr"
)

// benchWorld is one agent whose definition has n lessons, each with one
// comment, from 100 sibling agents (half owned by the agent's owner, the
// rest by five other owners, two of them allowlisted) and 50 strangers.
type benchWorld struct {
	sub    lessons.Subject
	policy *lessons.Policy
	events []*nostr.Event // everything, oldest first
	ev     *lessons.Evidence
	clock  nostr.Timestamp
	agent  key
}

func newBenchWorld(b *testing.B, n int) *benchWorld {
	w := &benchWorld{clock: nostr.Now() - nostr.Timestamp(2*n) - 1000, agent: testkit.NewKey(b)}
	defKey, owner := testkit.NewKey(b), testkit.NewKey(b)
	def, _ := events.ParseDefinition(w.add(b, defKey, (&events.Definition{Title: "Reviewer", Role: "Review code.", Tools: []string{"read"}}).Template()))
	owners := []key{owner, testkit.NewKey(b), testkit.NewKey(b), testkit.NewKey(b), testkit.NewKey(b), testkit.NewKey(b)}
	w.sub = lessons.Subject{Agent: w.agent.PK, Owner: owner.PK, Definition: def}
	w.policy = mustPolicy(b, lessons.Config{Allowlist: []string{owners[1].PK, owners[2].PK}})
	authors := w.agents(b, def.ID, owners)
	for range 50 {
		authors = append(authors, testkit.NewKey(b))
	}
	for i := range n {
		l := w.add(b, authors[i%len(authors)], (&events.Lesson{DefinitionID: def.ID, Title: fmt.Sprint("lesson ", i), Category: "review",
			Content: fmt.Sprintf("Lesson %d: when reviewing, check error wrapping with %%w and name every table case; seen in run %d.", i, i)}).Template())
		commenter := owner
		if i%2 == 1 {
			commenter = authors[(i+7)%len(authors)]
		}
		w.add(b, commenter, (&events.Comment{RootID: l.ID, RootAuthor: l.PubKey, Content: fmt.Sprint("Refinement of lesson ", i)}).Template())
	}
	w.ev = evidenceOf(w.events)
	return w
}

// agents makes the agent and 100 siblings with verified owner links.
func (w *benchWorld) agents(b *testing.B, defID string, owners []key) []key {
	owned := map[string][]string{owners[0].PK: {w.agent.PK}}
	w.add(b, w.agent, (&events.Profile{Bot: true, DefinitionID: defID, Owner: owners[0].PK}).Template())
	var sibs []key
	for i := range 100 {
		o := owners[0]
		if i%2 == 1 {
			o = owners[1+i%5]
		}
		k := testkit.NewKey(b)
		w.add(b, k, (&events.Profile{Bot: true, DefinitionID: defID, Owner: o.PK}).Template())
		owned[o.PK] = append(owned[o.PK], k.PK)
		sibs = append(sibs, k)
	}
	for _, o := range owners {
		w.add(b, o, (&events.OwnerClaims{Agents: owned[o.PK]}).Template())
	}
	return sibs
}

func (w *benchWorld) add(b *testing.B, k key, tmpl nostr.Event) *nostr.Event {
	w.clock++
	tmpl.CreatedAt = w.clock
	if err := tmpl.Sign(k.SK); err != nil {
		b.Fatal(err)
	}
	w.events = append(w.events, &tmpl)
	return &tmpl
}

// evidenceOf sorts events into Evidence as Gather would find them.
func evidenceOf(evts []*nostr.Event) *lessons.Evidence {
	ev := &lessons.Evidence{}
	for _, e := range evts {
		switch e.Kind {
		case events.KindLesson:
			ev.Lessons = append(ev.Lessons, e)
		case events.KindComment:
			ev.Comments = append(ev.Comments, e)
		case events.KindProfile:
			ev.Profiles = append(ev.Profiles, e)
		case events.KindOwnerClaims:
			ev.Claims = append(ev.Claims, e)
		}
	}
	return ev
}

// timings collects per-iteration durations for a p50.
type timings []time.Duration

func (ts *timings) time(f func()) {
	start := time.Now()
	f()
	*ts = append(*ts, time.Since(start))
}

func (ts timings) report(b *testing.B) {
	s := slices.Clone(ts)
	slices.Sort(s)
	if len(s) > 0 {
		b.ReportMetric(float64(s[len(s)/2].Microseconds())/1000, "p50-ms")
	}
}

// BenchmarkCompose_10kLessons: one agent, 10,000 lessons and 10,000
// comments on its definition.
//
//	go test -tags libsecp256k1 -run '^$' -bench Compose_10kLessons -benchtime 20x ./lessons/
//
// evaluate+compose works on gathered evidence; the relay sub-benchmarks load
// the 20,000 events into a real relay first (about a minute; skipped with -short).
func BenchmarkCompose_10kLessons(b *testing.B) {
	w := newBenchWorld(b, 10_000)
	b.Run("evaluate+compose", func(b *testing.B) {
		var ts timings
		var eff lessons.Effective
		for b.Loop() {
			ts.time(func() { eff = lessons.Compose(w.sub.Definition, nil, w.policy.Evaluate(w.sub, w.ev)) })
		}
		ts.report(b)
		b.ReportMetric(float64(len(eff.Prompt))/1e6, "prompt-MB")
		b.ReportMetric(float64(applied(eff)), "applied")
	})
	b.Run("key", func(b *testing.B) {
		var ts timings
		for b.Loop() {
			ts.time(func() { lessons.Key(w.sub, w.ev, w.policy) })
		}
		ts.report(b)
	})
	if testing.Short() {
		b.Skip("relay sub-benchmarks load 20,000 events")
	}
	benchRelay(b, w)
}

func applied(eff lessons.Effective) int {
	n := 0
	for _, l := range eff.Lessons {
		if l.Applied {
			n++
		}
	}
	return n
}

// benchRelay loads w into a relay and times Gather.
func benchRelay(b *testing.B, w *benchWorld) {
	s := newScene(b)
	ctx := context.Background()
	start := time.Now()
	for _, e := range w.events {
		if err := s.r.Publish(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("loaded %d events into the relay in %s", len(w.events), time.Since(start).Round(time.Millisecond))
	settle(b, s, w.sub)
	b.Run("relay/gather", func(b *testing.B) {
		var ts timings
		for b.Loop() {
			ts.time(func() { mustGather(b, s, w.sub) })
		}
		ts.report(b)
	})
}

// settle waits (polling, with a deadline) until the relay's background
// search indexing has caught up with the load, then warms the caches, so
// that the timings are not those of a relay still busy indexing.
func settle(b *testing.B, s *scene, sub lessons.Subject) {
	last := nostr.Filter{Kinds: []int{events.KindLesson}, Search: "9999", Limit: 1}
	testkit.WaitFor(b, 2*time.Minute, "the search index to catch up", func() bool {
		found, err := s.r.QuerySync(context.Background(), last)
		return err == nil && len(found) > 0
	})
	for range 3 {
		mustGather(b, s, sub)
	}
}

func mustGather(b *testing.B, s *scene, sub lessons.Subject) *lessons.Evidence {
	ev, err := lessons.Gather(context.Background(), s.r, sub)
	if err != nil {
		b.Fatal(err)
	}
	return ev
}
