package lessons_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/lessons"
)

// Recomposition is skipped while nothing changes, and happens on every kind
// of change: a lesson, a comment, a deletion, a claim, a nudge, the policy.
func TestComposer_Effective(t *testing.T) {
	s := newScene(t)
	c := lessons.NewComposer(s.r, nil)
	sub := s.subject()
	var misses uint64
	step := func(name string, wantRecompose bool) lessons.Effective {
		t.Helper()
		eff, err := c.Effective(context.Background(), sub)
		if err != nil {
			t.Fatal(err)
		}
		if wantRecompose {
			misses++
		}
		if st := c.Stats(); st.Misses != misses {
			t.Fatalf("%s: %d recompositions, want %d", name, st.Misses, misses)
		}
		return eff
	}

	step("first", true)
	step("unchanged", false)
	l := s.lesson(s.agent, "t", "LESSON")
	step("new lesson", true)
	step("unchanged again", false)
	cm := s.comment(s.owner, l, "COMMENT")
	if eff := step("new comment", true); !strings.Contains(eff.Prompt, "COMMENT") {
		t.Fatalf("comment missing:\n%s", eff.Prompt)
	}
	s.remove(s.owner, cm.ID)
	step("comment deleted", true)
	other := testkit.NewKey(t)
	sib := s.sibling(other)
	s.lesson(sib, "t", "SIBLING")
	step("sibling lesson", true)
	s.claims(other, testkit.NewKey(t).PK)
	step("claims changed", true)
	sub.Nudges = []*events.Nudge{{ID: hex64("1"), Content: "NUDGE"}}
	step("nudge attached", true)
	c.SetPolicy(mustPolicy(t, lessons.Config{Allowlist: []string{other.PK}}))
	eff := step("policy changed", true)
	if !strings.Contains(eff.Prompt, "SIBLING") || !strings.Contains(eff.Prompt, "NUDGE") {
		t.Fatalf("prompt:\n%s", eff.Prompt)
	}
	if st := c.Stats(); st.Hits != 2 {
		t.Errorf("%d hits, want 2", st.Hits)
	}
}

func TestKey_orderIndependent(t *testing.T) {
	s := newScene(t)
	s.lesson(s.agent, "a", "1")
	s.lesson(s.owner, "b", "2")
	ev, err := lessons.Gather(context.Background(), s.r, s.subject())
	if err != nil {
		t.Fatal(err)
	}
	k1 := lessons.Key(s.subject(), ev, lessons.DefaultPolicy())
	ev.Lessons[0], ev.Lessons[1] = ev.Lessons[1], ev.Lessons[0]
	if k2 := lessons.Key(s.subject(), ev, lessons.DefaultPolicy()); k1 != k2 {
		t.Errorf("key depends on arrival order")
	}
	ev.Lessons = ev.Lessons[:1]
	if k3 := lessons.Key(s.subject(), ev, lessons.DefaultPolicy()); k3 == k1 {
		t.Errorf("key ignores a lesson")
	}
}
