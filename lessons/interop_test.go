package lessons_test

import (
	"context"
	"encoding/json"
	"os"
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
	project := "31933:" + s.owner.PK + ":my-project"
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

// commentCase is the part of a testdata/interop/comments.json case this
// package reads.
type commentCase struct {
	Name   string          `json:"name"`
	Tags   [][]string      `json:"tags"`
	Expect map[string]bool `json:"expect"`
}

// TestCompose_CommentCorpus: every comment shape of the corpus that the
// relay accepts is folded into the prompt exactly when it is rooted at the
// lesson; the shapes the relay refuses never reach a prompt.
func TestCompose_CommentCorpus(t *testing.T) {
	b, err := os.ReadFile("../testdata/interop/comments.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []commentCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	s := newScene(t)
	lesson := s.lesson(s.agent, "Run gofmt", "Format first.")
	note := s.publish(s.owner, nostr.Event{Kind: 1, Content: "a note"})
	top := s.comment(s.owner, lesson, "top")
	vars := strings.NewReplacer("{lesson}", lesson.ID, "{lessonAuthor}", lesson.PubKey, "{note}", note.ID,
		"{comment}", top.ID, "{commentAuthor}", top.PubKey, "{unknown}", strings.Repeat("e", 64))
	want := map[string]bool{}
	for _, cc := range cases {
		folds, ok := cc.Expect["folds"]
		if !ok {
			continue
		}
		tags := nostr.Tags{}
		for _, tag := range cc.Tags {
			filled := nostr.Tag{}
			for _, v := range tag {
				filled = append(filled, vars.Replace(v))
			}
			tags = append(tags, filled)
		}
		evt := nostr.Event{Kind: events.KindComment, Tags: tags, Content: cc.Name, CreatedAt: nostr.Now()}
		if err := evt.Sign(s.owner.SK); err != nil {
			t.Fatal(err)
		}
		if err := s.r.Publish(context.Background(), &evt); err != nil {
			if folds { // a shape that must fold must be stored first
				t.Fatalf("%s: refused: %v", cc.Name, err)
			}
			continue // refused by the relay (e.g. a root kind contradicting the root): never folded
		}
		want[evt.ID] = folds
	}
	folded := map[string]bool{}
	for _, c := range view(t, s.effective(lessons.DefaultPolicy()), lesson.ID).Comments {
		folded[c.ID] = c.Applied
	}
	for id, w := range want {
		if folded[id] != w {
			t.Errorf("comment %s: folded %v, want %v", id[:8], folded[id], w)
		}
	}
}
