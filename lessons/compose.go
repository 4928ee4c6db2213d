package lessons

import (
	"github.com/agentnode/agentnode/events"
)

// Effective is an agent's effective behaviour: the system prompt, the tool
// set, and every lesson seen for its definition with the verdict on it.
// `agentnode agent show --effective --json` prints it as is. Callers must
// not modify an Effective they did not build.
type Effective struct {
	Prompt  string       `json:"prompt"`
	Tools   []string     `json:"tools"`
	Lessons []LessonView `json:"lessons"`
}

// LessonView is one lesson's provenance: applied with the rule that let it
// in, or refused with the reason.
type LessonView struct {
	ID       string        `json:"id"`
	Author   string        `json:"author"` // 64-hex pubkey
	Title    string        `json:"title"`
	Applied  bool          `json:"applied"`
	Rule     string        `json:"rule,omitempty"`   // when applied
	Reason   string        `json:"reason,omitempty"` // when refused
	Comments []CommentView `json:"comments,omitempty"`
}

// CommentView is one comment's provenance under its lesson.
type CommentView struct {
	ID      string `json:"id"`
	Author  string `json:"author"`           // 64-hex pubkey
	Parent  string `json:"parent,omitempty"` // the comment replied to; empty for a top-level comment
	Applied bool   `json:"applied"`
	Rule    string `json:"rule,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// Compose builds the effective behaviour from a definition, the nudges in
// force (in order) and the verdicts of Evaluate. Only applied lessons and
// applied comments reach the prompt, as quoted, attributed data.
func Compose(def *events.Definition, nudges []*events.Nudge, verdicts []Verdict) Effective {
	var tools []string
	if def != nil {
		tools = def.Tools
	}
	return Effective{
		Prompt:  buildPrompt(def, nudges, verdicts),
		Tools:   CombineNudges(tools, nudges...),
		Lessons: views(verdicts),
	}
}

// views lists every verdict as a LessonView (never nil, so JSON shows []).
func views(verdicts []Verdict) []LessonView {
	out := make([]LessonView, 0, len(verdicts))
	for _, v := range verdicts {
		out = append(out, LessonView{
			ID: v.Lesson.ID, Author: v.Lesson.PubKey, Title: v.Lesson.Title,
			Applied: v.Applied, Rule: string(v.Rule), Reason: v.Reason,
			Comments: commentViews(v.Comments),
		})
	}
	return out
}

func commentViews(list []CommentVerdict) []CommentView {
	var out []CommentView
	for _, c := range list {
		cv := CommentView{ID: c.Comment.ID, Author: c.Comment.PubKey, Applied: c.Applied, Rule: string(c.Rule), Reason: c.Reason}
		if c.Comment.ParentID != c.Comment.RootID {
			cv.Parent = c.Comment.ParentID
		}
		out = append(out, cv)
	}
	return out
}
