package lessons_test

import (
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/lessons"
)

// tenexLesson is a lesson as TENEX writes it (tenex-chat/tenex@d48b9938
// crates/tenex-protocol/src/nostr/encoder.rs encode_lesson with
// add_standard_tags; learn.rs never sets the definition): no "e".
func tenexLesson(project, title, content string) nostr.Event {
	return nostr.Event{Kind: events.KindLesson, Content: content, Tags: nostr.Tags{
		{"title", title}, {"category", "build"}, {"t", "rust"}, {"a", project},
		{"llm-model", "anthropic:claude-sonnet-4"}, {"llm-runtime", "5321", "ms"}, {"llm-ral", "3"},
	}}
}

func TestPolicy_UnboundLessons(t *testing.T) {
	s := newScene(t)
	project := "31933:" + s.owner.pk + ":my-project"
	own := s.publish(s.agent, tenexLesson(project, "Check the lockfile", "Run cargo update only when stale."))
	free := s.publish(s.agent, nostr.Event{Kind: events.KindLesson, Content: "Say when you are unsure."})
	byOwner := s.publish(s.owner, tenexLesson(project, "Owner's note", "x"))
	sib := s.sibling(s.owner)
	twoDefs := s.publish(sib, nostr.Event{Kind: events.KindLesson, Content: "Quote sources.",
		Tags: nostr.Tags{{"title", "Quote sources"}, {"e", strings.Repeat("9", 64)}, {"e", s.def.ID}}})

	eff := s.effective(lessons.DefaultPolicy())
	for _, tt := range []struct {
		evt  *nostr.Event
		rule string
	}{{own, "self"}, {free, "self"}, {twoDefs, "sibling"}} {
		if v := view(t, eff, tt.evt.ID); !v.Applied || v.Rule != tt.rule {
			t.Errorf("lesson %q: %+v, want applied by %s", tt.evt.Content, v, tt.rule)
		}
		if block(eff.Prompt, tt.evt.ID) == "" {
			t.Errorf("lesson %q is not in the prompt", tt.evt.Content)
		}
	}
	for _, l := range eff.Lessons {
		if l.ID == byOwner.ID {
			t.Errorf("the owner's unbound lesson was gathered for the agent: %+v", l)
		}
	}

	// Handed one anyway, the policy refuses another author's unbound lesson.
	ev := &lessons.Evidence{Lessons: []*nostr.Event{byOwner, own}}
	verdicts := lessons.DefaultPolicy().Evaluate(s.subject(), ev)
	if len(verdicts) != 2 || verdicts[1].Applied || verdicts[1].Reason != lessons.ReasonUnbound {
		t.Errorf("owner's unbound lesson: %+v", verdicts)
	}

	off := s.effective(mustPolicy(t, lessons.Config{Disable: []string{"self"}}))
	if v := view(t, off, own.ID); v.Applied || !strings.Contains(v.Reason, "rule self is disabled") {
		t.Errorf("with self off: %+v", v)
	}
}
