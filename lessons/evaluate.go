package lessons

import (
	"cmp"
	"slices"

	"github.com/agentnode/agentnode/events"
	"github.com/nbd-wtf/go-nostr"
)

// Verdict is the trust policy's outcome for one lesson and its comments.
type Verdict struct {
	Lesson *events.Lesson
	Decision
	Comments []CommentVerdict // oldest first
}

// CommentVerdict is the outcome for one comment under a lesson. A comment
// is applied only when its author is trusted and its lesson is applied.
type CommentVerdict struct {
	Comment *events.Comment
	Decision
}

// Evaluate judges every lesson of s's definition in ev, and every comment
// on them, under p. Lessons come oldest first. A lesson retracted by its
// author is kept, refused with ReasonRetracted; a comment deleted by its
// author is dropped.
func (p *Policy) Evaluate(s Subject, ev *Evidence) []Verdict {
	if s.Definition == nil || ev == nil {
		return nil
	}
	e := newEvaluation(p, s, ev)
	lessons := e.lessons(ev.Lessons)
	comments := e.comments(ev.Comments, lessons)
	out := make([]Verdict, 0, len(lessons))
	for _, l := range lessons {
		v := Verdict{Lesson: l.lesson, Decision: e.lessonDecision(l)}
		v.Comments = e.commentVerdicts(comments[l.lesson.ID], v.Applied)
		out = append(out, v)
	}
	return out
}

// evaluation is one Evaluate call's state.
type evaluation struct {
	p       *Policy
	w       *world
	deleted map[string]map[string]bool // target id -> pubkeys that asked to delete it
	memo    map[string]Decision        // trust decision per author
}

func newEvaluation(p *Policy, s Subject, ev *Evidence) *evaluation {
	w := &world{
		agent: s.Agent, owner: s.Owner, defID: s.Definition.ID, defAuthor: s.Definition.PubKey,
		profiles: newestProfiles(ev.Profiles),
		claims:   newestClaims(ev.Claims),
		follows:  follows(ev.Contacts, s.Owner),
	}
	return &evaluation{p: p, w: w, deleted: deletions(ev.Deletions), memo: map[string]Decision{}}
}

// trust is p.judge memoized per author.
func (e *evaluation) trust(author string) Decision {
	d, ok := e.memo[author]
	if !ok {
		d = e.p.judge(e.w, author)
		e.memo[author] = d
	}
	return d
}

// retracted reports whether the event's own author asked to delete it.
func (e *evaluation) retracted(id, author string) bool { return e.deleted[id][author] }

// parsedLesson is a lesson event of this definition, or the reason it is malformed.
type parsedLesson struct {
	lesson *events.Lesson
	err    error
}

// lessons parses the lesson events of this definition, oldest first.
func (e *evaluation) lessons(evts []*nostr.Event) []parsedLesson {
	out := make([]parsedLesson, 0, len(evts))
	for _, evt := range evts {
		l, err := events.ParseLesson(evt)
		if err != nil {
			l = &events.Lesson{ID: evt.ID, PubKey: evt.PubKey, CreatedAt: evt.CreatedAt}
		} else if !l.Unbound() && !l.Names(e.w.defID) {
			continue
		}
		out = append(out, parsedLesson{lesson: l, err: err})
	}
	slices.SortFunc(out, func(a, b parsedLesson) int {
		return cmp.Or(cmp.Compare(a.lesson.CreatedAt, b.lesson.CreatedAt), cmp.Compare(a.lesson.ID, b.lesson.ID))
	})
	return out
}

func (e *evaluation) lessonDecision(l parsedLesson) Decision {
	switch {
	case l.err != nil:
		return refused(invalidEvent(l.err))
	case e.retracted(l.lesson.ID, l.lesson.PubKey):
		return refused(ReasonRetracted)
	case l.lesson.Unbound():
		return e.unbound(l.lesson)
	}
	return e.trust(l.lesson.PubKey)
}

// unbound decides a lesson that names no definition (tied to a project
// "a", or to nothing): nothing scopes it to this agent's definition, so
// only the agent that wrote it applies it, under the self rule.
func (e *evaluation) unbound(l *events.Lesson) Decision {
	switch {
	case l.PubKey != e.w.agent:
		return refused(ReasonUnbound)
	case !e.p.on[RuleSelf]:
		return refused(ruleDisabled(RuleSelf))
	}
	return admitted(RuleSelf)
}

// comments groups the well-formed, undeleted comments by the lesson they
// are rooted at, oldest first. Only lesson-rooted comments count: the root
// named must be one of the lessons, and a declared root kind ("K") other
// than 4129 contradicts that root, so the comment is left out.
func (e *evaluation) comments(evts []*nostr.Event, lessons []parsedLesson) map[string][]*events.Comment {
	known := make(map[string]bool, len(lessons))
	for _, l := range lessons {
		known[l.lesson.ID] = true
	}
	out := map[string][]*events.Comment{}
	for _, evt := range evts {
		c, err := events.ParseComment(evt)
		if err != nil || !known[c.RootID] || (c.RootKind != 0 && c.RootKind != events.KindLesson) || e.retracted(c.ID, c.PubKey) {
			continue
		}
		out[c.RootID] = append(out[c.RootID], c)
	}
	for _, list := range out {
		slices.SortFunc(list, func(a, b *events.Comment) int {
			return cmp.Or(cmp.Compare(a.CreatedAt, b.CreatedAt), cmp.Compare(a.ID, b.ID))
		})
	}
	return out
}

// commentVerdicts judges each comment's author; none is applied under a
// lesson that is not.
func (e *evaluation) commentVerdicts(list []*events.Comment, lessonApplied bool) []CommentVerdict {
	out := make([]CommentVerdict, 0, len(list))
	for _, c := range list {
		d := e.trust(c.PubKey)
		if d.Applied && !lessonApplied {
			d = refused(ReasonLessonRefused)
		}
		out = append(out, CommentVerdict{Comment: c, Decision: d})
	}
	return out
}
