package agentd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/capabilities/llm"
	"github.com/agentnode/agentnode/capabilities/modelloop"
	"github.com/agentnode/agentnode/capabilities/router"
)

// DefaultConversation is the conversation of a chat message that names none.
const DefaultConversation = "default"

// ChatReply is the answer to one chat message.
type ChatReply struct {
	Agent        string `json:"agent"` // 64-hex
	Conversation string `json:"conversation"`
	Answer       string `json:"answer"`
	// Capability is the capability that answered ("" = the agent's own
	// prompt); Reason says why the router chose it (switch, back, stack,
	// trigger:<value>, reclassify:<value>, refused:model, fallback).
	Capability string `json:"capability,omitempty"`
	Reason     string `json:"reason"`
	// Model is the configured model chosen for the capability's
	// llm_requirements ("" = the default).
	Model string `json:"model,omitempty"`
	// Popped lists the capabilities that left the stack before this
	// message (idle timeout, re-classification).
	Popped    []string       `json:"popped,omitempty"`
	Steps     int            `json:"steps"` // model calls
	ToolCalls []ToolCallView `json:"tool_calls,omitempty"`
	Done      bool           `json:"done,omitempty"` // the capability finished (popped)
}

// ToolCallView is one tool call the model made during a chat turn.
type ToolCallView struct {
	Name       string `json:"name"`
	Args       string `json:"args"`
	Result     string `json:"result"`
	ErrorCode  string `json:"error_code,omitempty"`
	DurationMS int64  `json:"duration_ms"`
}

// noModelHint says how to configure a model.
const noModelHint = "configure an OpenAI-compatible model for `agentnode serve`: " +
	llm.EnvBaseURL + " (e.g. http://127.0.0.1:11434/v1), " + llm.EnvModel + " (e.g. llama3.1) and, if the provider needs one, " + llm.EnvAPIKey

// Chat answers one message to the agent in a conversation: the router
// picks the capability (per-conversation stack, /back, /switch, triggers;
// else the agent's own effective prompt); the model runs with that prompt
// and the tools the agent may use there (Tools), and the capability is
// popped when a tool result says {"done": true}. The user's message and
// the answer are appended to the agent's ConversationLog (Config.State).
// A router command that needs no model (/back alone, /switch alone) is
// answered without one. Without a model configured, Chat fails with an
// error wrapping llm.ErrNoModel that says how to configure one.
func (d *Daemon) Chat(ctx context.Context, agent, conversation, text string) (ChatReply, error) {
	a, err := d.Lookup(agent)
	if err != nil {
		return ChatReply{}, err
	}
	if err := d.checkRevoked(ctx, a); err != nil {
		return ChatReply{}, err
	}
	if strings.TrimSpace(text) == "" {
		return ChatReply{}, fmt.Errorf("%w: an empty message", ErrBadRequest)
	}
	conv := strings.TrimSpace(conversation)
	if conv == "" {
		conv = DefaultConversation
	}
	r, err := d.router(ctx, a.PubKey)
	if err != nil {
		return ChatReply{}, err
	}
	dec := r.Route(conv, text)
	reply := ChatReply{Agent: a.PubKey, Conversation: conv, Capability: dec.Capability, Reason: dec.Reason,
		Model: dec.Model, Popped: dec.Popped}
	if dec.Reply != "" {
		reply.Answer = dec.Reply
		d.logTurn(ctx, a, text, reply.Answer)
		return reply, nil
	}
	res, err := d.turn(ctx, a, conv, dec)
	if err != nil {
		return ChatReply{}, err
	}
	if res.Done {
		r.Done(conv)
	}
	reply.Answer, reply.Steps, reply.Done, reply.ToolCalls = res.Answer, res.Steps, res.Done, toolViews(res.ToolCalls)
	d.caps.chat.remember(a.PubKey, conv, dec.Message, res.Answer)
	d.logTurn(ctx, a, text, res.Answer)
	return reply, nil
}

// checkRevoked fails with ErrRevoked for an agent its owner revoked
// (Config.Revoked): it then answers nothing and runs no tool.
func (d *Daemon) checkRevoked(ctx context.Context, a Agent) error {
	if d.cfg.Revoked != nil && d.cfg.Revoked(ctx, a.PubKey) {
		return fmt.Errorf("%w: %s", ErrRevoked, a.Name)
	}
	return nil
}

// turn runs the model on message with capID's prompt and tools (capID ""
// = the agent's own).
func (d *Daemon) turn(ctx context.Context, a Agent, conv string, dec router.Decision) (*modelloop.Result, error) {
	capID, message := dec.Capability, dec.Message
	if d.cfg.Model == nil {
		return nil, fmt.Errorf("%w: %s", llm.ErrNoModel, noModelHint)
	}
	ts, err := d.toolset(ctx, a.PubKey, capID)
	if err != nil {
		return nil, err
	}
	if dec.Model == "" && ts.pkg != nil { // a skill call: no router chose
		if dec.Model, err = router.ChooseModel(capID, ts.pkg.Metadata.LLM, d.cfg.Models); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrModelFailed, err)
		}
	}
	system, err := d.systemPrompt(ctx, a, ts)
	if err != nil {
		return nil, err
	}
	res, err := modelloop.Run(ctx, modelloop.Turn{Model: d.cfg.Model, ModelName: dec.Model, System: system,
		History: d.caps.chat.history(a.PubKey, conv), User: message,
		Tools: ts.defs, Allowed: ts.Allowed, Exec: ts})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %v", ErrModelFailed, err)
	}
	return res, nil
}

// systemPrompt is the capability's prompt, or the agent's effective prompt.
func (d *Daemon) systemPrompt(ctx context.Context, a Agent, ts *toolset) (string, error) {
	if ts.pkg != nil {
		return ts.pkg.Prompt, nil
	}
	eff, err := d.Effective(ctx, a.PubKey)
	if err != nil {
		return "", err
	}
	return eff.Prompt, nil
}

// logTurn appends the user's message and the answer to the agent's
// ConversationLog (as the agent, acting for its owner). A failure is
// logged, not returned: the turn has happened (its tools have run), and
// the answer is worth more to the user than the log entry.
func (d *Daemon) logTurn(ctx context.Context, a Agent, user, answer string) {
	if d.cfg.State == nil {
		return
	}
	c := state.Caller{Agent: a.PubKey, Owner: a.Owner}
	for _, e := range []struct{ role, content string }{{state.RoleUser, user}, {state.RoleAssistant, answer}} {
		if _, err := d.cfg.State.AppendConversation(ctx, c, e.role, e.content); err != nil {
			d.log.Warn("conversation log: entry not appended", "agent", a.PubKey, "role", e.role, "err", err)
			return
		}
	}
}

func toolViews(calls []modelloop.ToolCallRecord) []ToolCallView {
	var out []ToolCallView
	for _, c := range calls {
		out = append(out, ToolCallView{Name: c.Name, Args: c.Args, Result: string(c.Result),
			ErrorCode: c.ErrorCode, DurationMS: c.Duration.Milliseconds()})
	}
	return out
}

// router returns the agent's router, built from its installed capabilities
// on first use and kept current by capsChanged.
func (d *Daemon) router(ctx context.Context, agent string) (*router.Router, error) {
	if r := d.caps.chat.router(agent); r != nil {
		return r, nil
	}
	routes, err := d.routes(ctx, agent)
	if err != nil {
		return nil, err
	}
	opts := router.Options{Models: d.cfg.Models, IdleTimeout: d.cfg.RouterIdle,
		Embedder: d.cfg.Embedder, EmbedThreshold: d.cfg.EmbedThreshold}
	return d.caps.chat.setRouter(agent, router.NewWith(routes, opts)), nil
}

// routes are the agent's installed capabilities as the router sees them.
func (d *Daemon) routes(ctx context.Context, agent string) ([]router.Route, error) {
	caps, err := d.caps.load(ctx, agent)
	if err != nil {
		return nil, err
	}
	var routes []router.Route
	for _, ic := range caps {
		p, err := d.pkg(ctx, agent, ic)
		if err != nil {
			d.log.Warn("capability skipped by the router", "agent", agent, "cap", ic.ID, "err", err)
			continue
		}
		routes = append(routes, router.RouteOf(p))
	}
	return append(routes, d.mcpRoutes(agent)...), nil // mcpservers_run.go
}

// capsChanged updates the agent's router after an install, upgrade or
// removal (a removed capability leaves every stack).
func (d *Daemon) capsChanged(ctx context.Context, agent string) {
	d.changed() // Changes: the agent's heartbeat lists its capabilities
	r := d.caps.chat.router(agent)
	if r == nil {
		return
	}
	routes, err := d.routes(ctx, agent)
	if err != nil {
		d.log.Warn("router not updated", "agent", agent, "err", err)
		d.caps.chat.dropRouter(agent)
		return
	}
	r.SetInstalled(routes)
}
