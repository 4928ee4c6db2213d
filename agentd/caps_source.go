package agentd

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/acp"
	"github.com/agentnode/agentnode/capabilities/cap"
	"github.com/agentnode/agentnode/capabilities/llm"
	"github.com/agentnode/agentnode/capabilities/router"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/lessons"
)

// CapSource is the daemon as a CAP source (capabilities/cap): an agent's
// capabilities are its installed packages, each a skill plus one tool per
// package tool (cap.ManifestsFor). Running a tool goes through the agent's
// executor (Tools: nudges, built-ins, bindings); running a skill is a chat
// turn with that capability's prompt and tools on input {"message": ...}
// (it needs a model) and answers {"answer", "steps", "tool_calls"}.
func (d *Daemon) CapSource() cap.Source { return capSource{d} }

type capSource struct{ d *Daemon }

var _ cap.Source = capSource{}

// capImpl is what Run needs of a capability, resolved once by
// Capabilities: the agent, its package and the nudges of the composition
// that listed it, so that a call neither looks the agent up nor composes
// it again.
type capImpl struct {
	agent  Agent
	pkg    *acp.Package
	nudges []*events.Nudge
	tool   string // "" for the skill
}

// Capabilities lists the agent's installed capabilities as CAP manifests.
func (s capSource) Capabilities(ctx context.Context, agent string) ([]cap.Capability, error) {
	a, err := s.d.Lookup(agent)
	if err != nil {
		return nil, capError(err)
	}
	caps, err := s.d.caps.load(ctx, a.PubKey)
	if err != nil {
		return nil, capError(err)
	}
	comp, err := s.d.compose(ctx, a.PubKey)
	if err != nil {
		return nil, capError(err)
	}
	var out []cap.Capability
	for _, ic := range caps {
		p, err := s.d.pkg(ctx, a.PubKey, ic)
		if err != nil {
			s.d.log.Warn("capability not listed", "agent", a.PubKey, "cap", ic.ID, "err", err)
			continue
		}
		allowed := lessons.CombineNudges(p.ToolNames(), comp.subject.Nudges...)
		for _, m := range cap.ManifestsFor(p) {
			impl := capImpl{agent: a, pkg: p, nudges: comp.subject.Nudges}
			if m.Kind == cap.KindTool {
				_, impl.tool, _ = strings.Cut(m.CapabilityID, "/")
				hidden := !slices.Contains(allowed, impl.tool) // a nudge takes it away (docs/CAP.md)
				c := cap.Capability{Manifest: m, Impl: impl, Hidden: hidden}
				if len(m.OutputSchema) == 0 && !hidden {
					c.OutputSchema = s.bindingSchemaOf(p, impl.tool)
				}
				out = append(out, c)
				continue
			}
			out = append(out, cap.Capability{Manifest: m, Impl: impl})
		}
	}
	return out, nil
}

// bindingSchemaTimeout bounds asking a binding for its output schema.
const bindingSchemaTimeout = 5 * time.Second

// bindingSchemaOf is the cap.Capability.OutputSchema of a package tool:
// nil when the tool has no callable binding, else the output schema its
// binding declares (the backing MCP tool's outputSchema), asked only when
// the Host needs it; a failure is logged, not fatal: the tool goes
// without one.
func (s capSource) bindingSchemaOf(p *acp.Package, tool string) func(context.Context) json.RawMessage {
	b, bound := p.Bindings[tool]
	if s.d.cfg.Bindings == nil || !bound || !b.Callable() {
		return nil
	}
	return func(ctx context.Context) json.RawMessage { return s.bindingSchema(ctx, p, tool, b) }
}

func (s capSource) bindingSchema(ctx context.Context, p *acp.Package, tool string, b acp.Binding) json.RawMessage {
	bs := s.d.cfg.Bindings
	ctx, cancel := context.WithTimeout(ctx, bindingSchemaTimeout)
	defer cancel()
	schema, err := bs.OutputSchema(ctx, b)
	if err != nil {
		s.d.log.Warn("binding output schema", "cap", p.Metadata.ID, "tool", tool, "err", err)
		return nil
	}
	return schema
}

// Run runs a tool through the executor, or a skill as a chat turn, on
// the capability as Capabilities resolved it.
func (s capSource) Run(ctx context.Context, _ string, c cap.Capability, input json.RawMessage) (json.RawMessage, error) {
	impl, ok := c.Impl.(capImpl)
	if !ok {
		return nil, capabilities.Errorf(capabilities.CodeNotFound, "capability %s is not the agent daemon's", c.Manifest.CapabilityID)
	}
	if err := s.d.checkRevoked(ctx, impl.agent); err != nil {
		return nil, capError(err)
	}
	if impl.tool != "" {
		return s.d.capToolset(ctx, impl.agent, impl.pkg, impl.nudges).CallTool(ctx, impl.tool, input)
	}
	return s.runSkill(ctx, impl, input)
}

// runSkill is one chat turn pinned to the capability, in a conversation of
// its own (no router, no history).
func (s capSource) runSkill(ctx context.Context, impl capImpl, input json.RawMessage) (json.RawMessage, error) {
	var in struct {
		Message string `json:"message"`
	}
	if err := json.Unmarshal(input, &in); err != nil || strings.TrimSpace(in.Message) == "" {
		return nil, capabilities.Errorf(capabilities.CodeInvalidInput, "a skill takes {\"message\": \"...\"}")
	}
	a := impl.agent
	res, err := s.d.turn(ctx, a, "", router.Decision{Capability: impl.pkg.Metadata.ID, Message: in.Message})
	if errors.Is(err, llm.ErrNoModel) {
		return nil, capabilities.Errorf(capabilities.CodeExecutionFailed, "no model is configured on this node: a skill needs one")
	}
	if err != nil {
		return nil, capError(err)
	}
	s.d.logTurn(ctx, a, in.Message, res.Answer)
	return json.Marshal(map[string]any{"answer": res.Answer, "steps": res.Steps, "tool_calls": toolViews(res.ToolCalls)})
}
