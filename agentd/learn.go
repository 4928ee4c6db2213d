package agentd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/lessons"
)

// Learn publishes a lesson (kind 4129) signed with the agent's own key,
// referencing the definition version it runs: the built-in tool
// lesson.learn, and `agentnode agent learn` by hand. The agent's own
// lessons are trusted by it (rule self) and, once its owner link verifies,
// by its siblings whose owners trust that owner.
func (d *Daemon) Learn(ctx context.Context, agent, title, category, content string) (*nostr.Event, error) {
	a, err := d.Lookup(agent)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(title) == "" || strings.TrimSpace(content) == "" {
		return nil, fmt.Errorf("%w: a lesson needs a title and content", ErrBadRequest)
	}
	l := events.Lesson{DefinitionID: a.DefinitionID, Title: title, Category: category, Content: content}
	evt, err := d.signAndPublish(ctx, a.PubKey, l.Template())
	if err != nil {
		return nil, err
	}
	d.log.Info("lesson published", "agent", a.PubKey, "lesson", evt.ID, "title", title)
	return evt, nil
}

// ToolLearn is the name of the built-in tool that publishes a lesson.
const ToolLearn = "lesson.learn"

// ToolSpec describes a built-in tool to a model (MCP-style).
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// BuiltinTools are the tools every agent has unless a nudge takes them
// away (deny-tool, or an only-tool set that leaves them out).
var BuiltinTools = []ToolSpec{{
	Name:        ToolLearn,
	Description: "Publish a lesson you learned, signed with your own key, for agents of your definition to weigh.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string","description":"short summary"},"category":{"type":"string","description":"topic area"},"content":{"type":"string","description":"the lesson"}},"required":["title","content"],"additionalProperties":false}`),
}}

// learnArgs are lesson.learn's arguments.
type learnArgs struct {
	Title    string `json:"title"`
	Category string `json:"category"`
	Content  string `json:"content"`
}

// CallTool runs a built-in tool as the agent, with the nudges of the
// message being handled (may be nil). A tool the nudges take away fails
// with ErrToolDenied.
func (d *Daemon) CallTool(ctx context.Context, agent string, messageNudges []string, name string, args json.RawMessage) (any, error) {
	if !slices.ContainsFunc(BuiltinTools, func(t ToolSpec) bool { return t.Name == name }) {
		return nil, fmt.Errorf("%w: %q", ErrUnknownTool, name)
	}
	if err := d.builtinAllowed(ctx, agent, messageNudges, name); err != nil {
		return nil, err
	}
	var in learnArgs
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("%w: %s arguments: %v", ErrBadRequest, name, err)
	}
	evt, err := d.Learn(ctx, agent, in.Title, in.Category, in.Content)
	if err != nil {
		return nil, err
	}
	return map[string]string{"id": evt.ID}, nil
}

// builtinAllowed applies the agent's and the message's nudges to the
// built-in tool set (lessons.CombineNudges).
func (d *Daemon) builtinAllowed(ctx context.Context, agent string, messageNudges []string, name string) error {
	a, err := d.Lookup(agent)
	if err != nil {
		return err
	}
	c, err := d.compose(ctx, a.PubKey)
	if err != nil {
		return err
	}
	nudges := slices.Clone(c.subject.Nudges)
	for _, ref := range messageNudges {
		n, err := d.nudge(ctx, ref)
		if err != nil {
			return err
		}
		nudges = append(nudges, n)
	}
	if !slices.Contains(lessons.CombineNudges([]string{name}, nudges...), name) {
		return fmt.Errorf("%w: %s", ErrToolDenied, name)
	}
	return nil
}
