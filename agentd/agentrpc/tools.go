package agentrpc

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/jsonrpc"
)

// Tool is one entry of tools/list (MCP's shape).
type Tool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"inputSchema"`
}

func object(props map[string]any, required ...string) map[string]any {
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

var (
	strArray = map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
	str      = map[string]any{"type": "string"}
	num      = map[string]any{"type": "number"}
)

var tools = []Tool{
	{Name: "agentSearch", Description: "Find agents matching specific criteria, best-ranked first",
		InputSchema: object(map[string]any{"capabilities": strArray, "minScore": num, "maxCost": num, "text": str,
			"includeUnavailable": map[string]any{"type": "boolean"}, "limit": map[string]any{"type": "integer"}})},
	{Name: "taskAssign", Description: "Assign a task to the best-matching available agent (agent/delegate as a tool)",
		InputSchema: object(map[string]any{"task": map[string]any{"type": "object"}, "source": str, "target": str,
			"wait": map[string]any{"type": "boolean"}}, "task")},
	{Name: "agentEvaluate", Description: "Provide feedback on an agent's performance (score 0..10), signed by a local agent",
		InputSchema: object(map[string]any{"agentId": str, "evaluator": str, "score": num, "review": str, "ref": str},
			"agentId", "evaluator", "score")},
}

func (s *Service) toolsList(ctx context.Context, params json.RawMessage) (any, error) {
	return map[string]any{"tools": tools}, nil
}

type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ToolResult is tools/call's answer (MCP's CallToolResult): a text summary,
// the data as structuredContent, and for agentSearch the agents in _meta
// too (the spec's Appendix B).
type ToolResult struct {
	Content           []TextContent  `json:"content"`
	StructuredContent any            `json:"structuredContent,omitempty"`
	Meta              map[string]any `json:"_meta,omitempty"`
	IsError           bool           `json:"isError,omitempty"`
}

// TextContent is MCP text content.
type TextContent struct {
	Type string `json:"type"` // "text"
	Text string `json:"text"`
}

func (s *Service) toolsCall(ctx context.Context, params json.RawMessage) (any, error) {
	var p callParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if len(p.Arguments) == 0 {
		p.Arguments = json.RawMessage(`{}`)
	}
	switch p.Name {
	case "agentSearch":
		return s.agentSearch(ctx, p.Arguments)
	case "taskAssign":
		return s.taskAssign(ctx, p.Arguments)
	case "agentEvaluate":
		return s.agentEvaluate(ctx, p.Arguments)
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown tool", Data: map[string]string{"name": p.Name}}
}

type searchArgs struct {
	Capabilities       []string `json:"capabilities"`
	MinScore           float64  `json:"minScore"`
	MaxCost            *float64 `json:"maxCost"`
	Text               string   `json:"text"`
	IncludeUnavailable bool     `json:"includeUnavailable"`
	Limit              int      `json:"limit"`
}

func (s *Service) agentSearch(ctx context.Context, raw json.RawMessage) (any, error) {
	var a searchArgs
	if err := decode(raw, &a); err != nil {
		return nil, err
	}
	agents := s.listed(ctx, directory.Query{Capabilities: a.Capabilities, MinScore: a.MinScore, MaxCost: a.MaxCost,
		Text: a.Text, IncludeUnavailable: a.IncludeUnavailable, Limit: a.Limit})
	return ToolResult{
		Content:           []TextContent{{Type: "text", Text: fmt.Sprintf("Found %d matching agents", len(agents))}},
		StructuredContent: map[string]any{"agents": agents},
		Meta:              map[string]any{"agents": agents},
	}, nil
}

// taskAssign is agent/delegate as an MCP tool: same arguments, same code;
// the task comes back as structuredContent.
func (s *Service) taskAssign(ctx context.Context, raw json.RawMessage) (any, error) {
	var p DelegateParams
	if err := decode(raw, &p); err != nil {
		return nil, err
	}
	res, err := s.delegate(ctx, p, false)
	if err != nil {
		return nil, err
	}
	t := res.Task
	msg := fmt.Sprintf("Task %s is %s", t.ID, t.Status)
	if t.Assignee != "" {
		msg += " (agent " + t.Assignee + ")"
	}
	return ToolResult{Content: []TextContent{{Type: "text", Text: msg}}, StructuredContent: map[string]any{"task": t},
		Meta: map[string]any{"correlationId": res.Meta.CorrelationID}}, nil
}

type evaluateArgs struct {
	AgentID   string   `json:"agentId"`
	Evaluator string   `json:"evaluator"`
	Score     *float64 `json:"score"`
	Review    string   `json:"review"`
	Ref       string   `json:"ref"`
}

// agentEvaluate records a review signed by the local agent evaluator.
func (s *Service) agentEvaluate(ctx context.Context, raw json.RawMessage) (any, error) {
	var a evaluateArgs
	if err := decode(raw, &a); err != nil {
		return nil, err
	}
	target, err := s.proven("agentId", a.AgentID)
	if err != nil {
		return nil, err
	}
	evaluator, err := agentID("evaluator", a.Evaluator)
	if err != nil {
		return nil, err
	}
	if a.Score == nil {
		return nil, invalidPayload("score is required")
	}
	if err := s.checkRevoked(ctx, target, evaluator); err != nil {
		return nil, err
	}
	if !s.cfg.Local(evaluator) {
		return nil, invalidPayload("evaluator must be an agent on this node (it signs the review)")
	}
	sk, err := s.cfg.Keys(ctx, evaluator)
	if err != nil {
		return nil, err
	}
	evt, err := s.cfg.Directory.Evaluate(ctx, sk, target, *a.Score, a.Review, a.Ref)
	if err != nil {
		return nil, err
	}
	m, _ := s.cfg.Directory.Metrics(target)
	return ToolResult{Content: []TextContent{{Type: "text", Text: fmt.Sprintf("Recorded a %.1f review of %s", *a.Score, target)}},
		StructuredContent: map[string]any{"eventId": evt.ID, "qualityScore": m.QualityScore, "evaluationCount": m.EvaluationCount}}, nil
}
