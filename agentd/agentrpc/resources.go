package agentrpc

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/agentnode/agentnode/agentd/consent"
	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/agentd/tasks"
	"github.com/agentnode/agentnode/jsonrpc"
)

// Resource is one entry of resources/list (MCP's shape).
type Resource struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType"`
}

// ResourceTemplate is one entry of resources/templates/list.
type ResourceTemplate struct {
	URITemplate string `json:"uriTemplate"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType"`
}

var resources = []Resource{
	{URI: "agent://directory", Name: "Agent Directory", MimeType: "application/json",
		Description: "Every agent the node knows, best-ranked available first, then the unavailable."},
	{URI: "agent://tasks", Name: "Task Queue", MimeType: "application/json",
		Description: "The tasks delegated through this node, highest priority first."},
}

var templates = []ResourceTemplate{
	{URITemplate: "agent://metrics/{agentId}", Name: "Agent Metrics", MimeType: "application/json",
		Description: "One agent's quality score, reviews, availability, load and task figures."},
	{URITemplate: "agent://tasks/{taskId}", Name: "Task", MimeType: "application/json",
		Description: "One task."},
}

func (s *Service) resourcesList(ctx context.Context, params json.RawMessage) (any, error) {
	return map[string]any{"resources": resources}, nil
}

func (s *Service) resourceTemplatesList(ctx context.Context, params json.RawMessage) (any, error) {
	return map[string]any{"resourceTemplates": templates}, nil
}

type readParams struct {
	URI  string `json:"uri"`
	Meta Meta   `json:"_meta"`
}

// ResourceContents is one entry of resources/read's contents.
type ResourceContents struct {
	URI      string `json:"uri"`
	MimeType string `json:"mimeType"`
	Text     string `json:"text"`
}

func (s *Service) resourcesRead(ctx context.Context, params json.RawMessage) (any, error) {
	var p readParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	v, err := s.read(ctx, p)
	if err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return map[string]any{"contents": []ResourceContents{{URI: p.URI, MimeType: "application/json", Text: string(b)}}}, nil
}

func (s *Service) read(ctx context.Context, p readParams) (any, error) {
	switch {
	case p.URI == "agent://directory":
		return map[string]any{"agents": s.listed(ctx, directory.Query{IncludeUnavailable: true, Limit: -1})}, nil
	case p.URI == "agent://tasks":
		if err := s.check(ctx, consent.Request{Op: consent.OpPrivateState, Target: p.URI, Summary: "read the task queue"}, p.Meta.ApprovalID); err != nil {
			return nil, err
		}
		list, err := s.cfg.Tasks.List(ctx, tasks.Filter{})
		return map[string]any{"tasks": list}, err
	case strings.HasPrefix(p.URI, "agent://tasks/"):
		if err := s.check(ctx, consent.Request{Op: consent.OpPrivateState, Target: p.URI, Summary: "read a task"}, p.Meta.ApprovalID); err != nil {
			return nil, err
		}
		return s.cfg.Tasks.Get(ctx, strings.TrimPrefix(p.URI, "agent://tasks/"))
	case strings.HasPrefix(p.URI, "agent://metrics/"):
		return s.metrics(ctx, strings.TrimPrefix(p.URI, "agent://metrics/"))
	case p.URI == "":
		return nil, invalidPayload("uri is required")
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "resource not found", Data: map[string]string{"uri": p.URI}}
}

// listed is a directory search without the revoked agents.
func (s *Service) listed(ctx context.Context, q directory.Query) []directory.Agent {
	out := []directory.Agent{}
	for _, a := range s.cfg.Directory.Search(q) {
		if _, revoked := s.revoked(ctx, a.ID); !revoked {
			out = append(out, a)
		}
	}
	return out
}

// MetricsView is agent://metrics/{agentId}: the directory's metrics and this
// node's task figures for the agent.
type MetricsView struct {
	directory.Metrics
	Tasks tasks.AgentStats `json:"tasks"`
}

func (s *Service) metrics(ctx context.Context, raw string) (any, error) {
	id, err := s.proven("agentId", raw)
	if err != nil {
		return nil, err
	}
	if err := s.checkRevoked(ctx, id); err != nil {
		return nil, err
	}
	m, ok := s.cfg.Directory.Metrics(id)
	if !ok {
		return nil, agentNotFound(id)
	}
	st, err := s.cfg.Tasks.Stats(ctx, id)
	if err != nil {
		return nil, err
	}
	return MetricsView{Metrics: m, Tasks: st}, nil
}
