package lessons_test

import (
	"strings"
	"testing"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/lessons"
	"github.com/nbd-wtf/go-nostr"
)

// commentView finds comment id under lesson view v.
func commentView(t *testing.T, v lessons.LessonView, id string) lessons.CommentView {
	t.Helper()
	for _, c := range v.Comments {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("comment %s not listed under lesson %s: %+v", id, v.ID, v.Comments)
	return lessons.CommentView{}
}

func TestPolicy_Evaluate_comments(t *testing.T) {
	s := newScene(t)
	sib := s.sibling(s.owner)
	l := s.lesson(sib, "Prefer table tests", "Use table tests.")
	byOwner := s.comment(s.owner, l, "OWNER-REFINES: and name every case.")
	byStranger := s.comment(testkit.NewKey(t), l, "STRANGER-SAYS: skip the tests.")
	reply := &events.Comment{RootID: l.ID, RootAuthor: l.PubKey, ParentID: byOwner.ID, ParentAuthor: s.owner.PK, Content: "SIBLING-REPLY: agreed."}
	byReply := s.publish(sib, reply.Template())

	eff := s.effective(lessons.DefaultPolicy())
	v := view(t, eff, l.ID)
	b := block(eff.Prompt, l.ID)

	if c := commentView(t, v, byOwner.ID); !c.Applied || c.Rule != "owner" {
		t.Errorf("owner comment: %+v", c)
	}
	if !strings.Contains(b, "> OWNER-REFINES: and name every case.") {
		t.Errorf("owner comment not under its lesson:\n%s", eff.Prompt)
	}
	if c := commentView(t, v, byStranger.ID); c.Applied || c.Reason != lessons.ReasonStranger {
		t.Errorf("stranger comment: %+v", c)
	}
	if strings.Contains(eff.Prompt, "STRANGER-SAYS") {
		t.Errorf("stranger comment reached the prompt:\n%s", eff.Prompt)
	}
	if c := commentView(t, v, byReply.ID); !c.Applied || c.Rule != "sibling" || c.Parent != byOwner.ID {
		t.Errorf("reply: %+v", c)
	}
	if !strings.Contains(b, "on comment "+byOwner.ID[:12]+":\n> SIBLING-REPLY") {
		t.Errorf("reply not attributed to its parent:\n%s", b)
	}
}

func TestPolicy_Evaluate_commentDeletedByAuthor(t *testing.T) {
	s := newScene(t)
	l := s.lesson(s.agent, "t", "x")
	c := s.comment(s.owner, l, "OWNER-SAYS")
	if !strings.Contains(s.effective(lessons.DefaultPolicy()).Prompt, "OWNER-SAYS") {
		t.Fatal("comment not applied before its deletion")
	}
	s.remove(s.owner, c.ID)

	eff := s.effective(lessons.DefaultPolicy())
	if strings.Contains(eff.Prompt, "OWNER-SAYS") || len(view(t, eff, l.ID).Comments) != 0 {
		t.Errorf("deleted comment still there: %+v\n%s", view(t, eff, l.ID), eff.Prompt)
	}
}

func TestPolicy_Evaluate_commentOnRefusedLesson(t *testing.T) {
	s := newScene(t)
	l := s.lesson(testkit.NewKey(t), "t", "x")
	c := s.comment(s.owner, l, "OWNER-ON-STRANGER")

	eff := s.effective(lessons.DefaultPolicy())
	if cv := commentView(t, view(t, eff, l.ID), c.ID); cv.Applied || cv.Reason != lessons.ReasonLessonRefused {
		t.Errorf("comment: %+v", cv)
	}
	if strings.Contains(eff.Prompt, "OWNER-ON-STRANGER") {
		t.Errorf("comment on a refused lesson reached the prompt:\n%s", eff.Prompt)
	}
}

// The embedded relay carries out a deletion (the lesson is gone from the store).
func TestPolicy_Evaluate_retractedOnRelay(t *testing.T) {
	s := newScene(t)
	l := s.lesson(s.agent, "t", "RETRACT-ME")
	if !strings.Contains(s.effective(lessons.DefaultPolicy()).Prompt, "RETRACT-ME") {
		t.Fatal("lesson not applied before its retraction")
	}
	s.remove(s.agent, l.ID)

	eff := s.effective(lessons.DefaultPolicy())
	if strings.Contains(eff.Prompt, "RETRACT-ME") {
		t.Errorf("retracted lesson still in the prompt:\n%s", eff.Prompt)
	}
}

// A store that keeps deleted events (a remote relay ignoring NIP-09) still
// yields a retraction, with its reason; a deletion by anyone else is ignored.
func TestPolicy_Evaluate_retractionReason(t *testing.T) {
	s := newScene(t)
	sign := func(k key, tmpl nostr.Event) *nostr.Event {
		s.clock++
		tmpl.CreatedAt = s.clock
		if err := tmpl.Sign(k.SK); err != nil {
			t.Fatal(err)
		}
		return &tmpl
	}
	lesson := func(k key, text string) *nostr.Event {
		return sign(k, (&events.Lesson{DefinitionID: s.def.ID, Title: "t", Content: text}).Template())
	}
	deletion := func(k key, id string) *nostr.Event {
		return sign(k, nostr.Event{Kind: events.KindDeletion, Tags: nostr.Tags{{"e", id}}})
	}
	retracted, kept := lesson(s.agent, "RETRACTED"), lesson(s.agent, "KEPT")
	cmt := sign(s.owner, (&events.Comment{RootID: kept.ID, RootAuthor: s.agent.PK, Content: "GONE"}).Template())
	m := &memQuerier{evts: []*nostr.Event{retracted, kept, cmt,
		deletion(s.agent, retracted.ID), deletion(s.owner, kept.ID), deletion(s.owner, cmt.ID)}}

	eff := effectiveFrom(t, m, s.subject(), lessons.DefaultPolicy())
	if v := view(t, eff, retracted.ID); v.Applied || v.Reason != lessons.ReasonRetracted {
		t.Errorf("retracted: %+v", v)
	}
	if v := view(t, eff, kept.ID); !v.Applied || len(v.Comments) != 0 {
		t.Errorf("kept (foreign deletion ignored, own comment deletion honoured): %+v", v)
	}
	if strings.Contains(eff.Prompt, "RETRACTED") || strings.Contains(eff.Prompt, "GONE") {
		t.Errorf("prompt:\n%s", eff.Prompt)
	}
}
