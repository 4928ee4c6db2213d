package agentd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/agentnode/agentnode/agentd/state"
	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/capabilities/bindings"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/lessons"
)

// toolset is what one agent may call in one capability (or none): the
// tools offered after the nudges, and how to run them.
type toolset struct {
	d     *Daemon
	agent Agent
	capID string       // "" = the agent's own tools
	pkg   *acp.Package // nil when capID is ""
	// bindings runs pkg's bindings instead of Config.Bindings (the
	// agent's approved kind-4200 servers: mcpservers_run.go).
	bindings BindingCaller
	caller   state.Caller // state.* calls run as this
	offered  []string     // the tool names the package (or agent) has
	allowed  []string     // offered, as the nudges leave it
	defs     []capabilities.ToolDef
}

var _ capabilities.ToolCaller = (*toolset)(nil)

// Tools returns the agent's tool executor for capability capID (an
// installed capability's id, name@version or name) and the tools it
// offers, filtered by the agent's nudges (lessons.CombineNudges: only-tool
// fixes the set, deny wins). capID "" is the agent's own tools: the
// built-ins its effective tool set allows (lesson.learn unless a nudge
// takes it away; state.* only when the definition or a nudge names them,
// run in the default memory scope).
//
// The executor runs built-ins first (state.* through Config.State as the
// capability: state.CallerFromACP with its memory_scope and
// permissions.require; lesson.learn through the daemon), then the
// package's bindings (Config.Bindings), else NOT_FOUND "no binding". A tool
// the nudges deny is PERMISSION_DENIED, one the capability does not have
// NOT_FOUND. Errors are *capabilities.Error.
func (d *Daemon) Tools(ctx context.Context, agent, capID string) (capabilities.ToolCaller, []capabilities.ToolDef, error) {
	ts, err := d.toolset(ctx, agent, capID)
	if err != nil {
		return nil, nil, err
	}
	return ts, slices.Clone(ts.defs), nil
}

// toolset builds the executor of Tools.
func (d *Daemon) toolset(ctx context.Context, agent, capID string) (*toolset, error) {
	a, err := d.Lookup(agent)
	if err != nil {
		return nil, err
	}
	if err := d.checkRevoked(ctx, a); err != nil {
		return nil, err
	}
	c, err := d.compose(ctx, a.PubKey)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(capID) == "" {
		ts := d.ownTools(a, c.eff.Tools, c.subject.Nudges)
		ts.caller = asRequester(ctx, a, ts.caller)
		return ts, nil
	}
	if slug, ok := strings.CutPrefix(capID, MCPCapPrefix); ok {
		return d.mcpToolset(ctx, a, slug, c.subject.Nudges, c.eff.Prompt)
	}
	ic, err := d.installedCap(ctx, a.PubKey, capID)
	if err != nil {
		return nil, err
	}
	p, err := d.pkg(ctx, a.PubKey, ic)
	if err != nil {
		return nil, err
	}
	ts := d.capToolset(ctx, a, p, c.subject.Nudges)
	ts.defs = ts.toolDefs()
	return ts, nil
}

// capToolset is the executor of package p for agent a under its nudges:
// a capability already resolved (Lookup, composition and package read
// once per call, by toolset or by the CAP source). Its defs are not built.
func (d *Daemon) capToolset(ctx context.Context, a Agent, p *acp.Package, nudges []*events.Nudge) *toolset {
	ts := &toolset{d: d, agent: a, capID: p.Metadata.ID, pkg: p, offered: p.ToolNames(),
		caller: asRequester(ctx, a, state.CallerFromACP(a.PubKey, a.Owner, p.Metadata.ID, p.Metadata.MemoryScope, p.Metadata.Permissions.Require))}
	ts.allowed = lessons.CombineNudges(ts.offered, nudges...)
	return ts
}

// toolDefs are the definitions of the package tools the nudges leave.
func (ts *toolset) toolDefs() []capabilities.ToolDef {
	var defs []capabilities.ToolDef
	for _, name := range ts.offered { // not allowed: an allow-tool or only-tool may name tools the package lacks
		if !ts.Allowed(name) {
			continue
		}
		t, _ := ts.pkg.Tool(name)
		params, ok := ts.pkg.ToolParameters(name)
		if !ok {
			params = t.Function.Parameters
		}
		defs = append(defs, capabilities.ToolDef{Name: name, Description: t.Function.Description, Parameters: params})
	}
	return defs
}

// ownTools is the toolset of an agent outside any capability.
func (d *Daemon) ownTools(a Agent, effTools []string, nudges []*events.Nudge) *toolset {
	ts := &toolset{d: d, agent: a, caller: state.Caller{Agent: a.PubKey, Owner: a.Owner, Scope: state.DefaultScope}}
	ts.offered = []string{ToolLearn}
	for _, t := range state.ToolDefs() {
		if slices.Contains(effTools, t.Name) {
			ts.offered = append(ts.offered, t.Name)
			ts.caller.Verbs = append(ts.caller.Verbs, verbOf(t.Name))
		}
	}
	ts.allowed = lessons.CombineNudges(ts.offered, nudges...)
	for _, b := range BuiltinTools {
		if slices.Contains(ts.allowed, b.Name) {
			ts.defs = append(ts.defs, capabilities.ToolDef{Name: b.Name, Description: b.Description, Parameters: b.InputSchema})
		}
	}
	for _, t := range state.ToolDefs() {
		if slices.Contains(ts.allowed, t.Name) {
			ts.defs = append(ts.defs, t)
		}
	}
	return ts
}

// verbOf is the permission a state.* tool needs.
func verbOf(tool string) string {
	if tool == state.ToolGet || tool == state.ToolHistory {
		return state.VerbQuery
	}
	return tool
}

// Allowed reports whether the nudges leave name to the agent.
func (ts *toolset) Allowed(name string) bool { return slices.Contains(ts.allowed, name) }

// CallTool runs one tool call (see Daemon.Tools).
func (ts *toolset) CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	switch {
	case !slices.Contains(ts.offered, name):
		return nil, capabilities.Errorf(capabilities.CodeNotFound, "no tool %q here", name)
	case !ts.Allowed(name):
		return nil, capabilities.Errorf(capabilities.CodePermissionDenied, "%s is not available to this agent (a nudge takes it away)", name)
	case state.IsTool(name):
		return ts.callState(ctx, name, args)
	case name == ToolLearn:
		return ts.callLearn(ctx, args)
	}
	return ts.callBinding(ctx, name, args)
}

func (ts *toolset) callState(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	if ts.d.cfg.State == nil {
		return nil, capabilities.Errorf(capabilities.CodeExecutionFailed, "this node runs no state store")
	}
	return ts.d.cfg.State.CallTool(ctx, ts.caller, name, args)
}

func (ts *toolset) callLearn(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	var in learnArgs
	if err := decodeStrict(args, &in); err != nil {
		return nil, capabilities.Errorf(capabilities.CodeInvalidInput, "%s arguments: %v", ToolLearn, err)
	}
	evt, err := ts.d.Learn(ctx, ts.agent.PubKey, in.Title, in.Category, in.Content)
	if err != nil {
		return nil, capError(err)
	}
	return json.Marshal(map[string]string{"id": evt.ID})
}

func (ts *toolset) callBinding(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	var b acp.Binding
	var ok bool
	if ts.pkg != nil {
		b, ok = ts.pkg.Bindings[name]
	}
	if !ok {
		return nil, capabilities.Errorf(capabilities.CodeNotFound, "no binding for tool %q", name)
	}
	if !b.Callable() {
		return nil, capabilities.Errorf(capabilities.CodeNotFound, "tool %q: binding type %q is not one this node runs (the package was accepted, the tool is not callable)", name, b.Type)
	}
	run := ts.d.cfg.Bindings
	if ts.bindings != nil {
		run = ts.bindings
	}
	if run == nil {
		return nil, capabilities.Errorf(capabilities.CodeExecutionFailed, "this node runs no tool bindings (%s)", b.Type)
	}
	return run.CallBinding(ctx, ts.agent.PubKey, name, b, args)
}

// capError codes a daemon error for a tool result.
func capError(err error) error {
	var ce *capabilities.Error
	switch {
	case errors.As(err, &ce):
		return err
	case errors.Is(err, ErrBadRequest):
		return &capabilities.Error{Code: capabilities.CodeInvalidInput, Message: err.Error(), Err: err}
	case errors.Is(err, ErrToolDenied):
		return &capabilities.Error{Code: capabilities.CodePermissionDenied, Message: err.Error(), Err: err}
	case errors.Is(err, ErrUnknownAgent), errors.Is(err, ErrCapNotInstalled), errors.Is(err, ErrUnknownTool):
		return &capabilities.Error{Code: capabilities.CodeNotFound, Message: err.Error(), Err: err}
	case errors.Is(err, context.DeadlineExceeded):
		return &capabilities.Error{Code: capabilities.CodeTimeout, Message: "deadline exceeded", Err: err}
	}
	return &capabilities.Error{Code: capabilities.CodeExecutionFailed, Message: "tool failed", Err: err}
}

// decodeStrict reads a JSON object, refusing unknown fields.
func decodeStrict(args json.RawMessage, v any) error {
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// The binding runner is the daemon's BindingCaller as it is, both methods
// included; serve decorates it with bindings.Config.OnCall hooks, not by
// wrapping it.
var _ BindingCaller = (*bindings.Runner)(nil)
