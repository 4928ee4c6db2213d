package agentrpc

import (
	"context"
	"encoding/json"

	"github.com/agentnode/agentnode/capabilities/llm"
	"github.com/agentnode/agentnode/jsonrpc"
)

type samplingParams struct {
	Messages []struct {
		Role    string `json:"role"`
		Content struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"messages"`
	SystemPrompt string   `json:"systemPrompt"`
	MaxTokens    int      `json:"maxTokens"`
	Temperature  *float64 `json:"temperature"`
}

// SamplingResult is sampling/createMessage's answer (MCP's CreateMessageResult).
type SamplingResult struct {
	Role       string      `json:"role"`
	Content    TextContent `json:"content"`
	Model      string      `json:"model"`
	StopReason string      `json:"stopReason"`
}

// samplingCreateMessage asks the node's configured model. Only text
// content is taken; maxTokens and temperature are passed to the model
// (maxTokens capped by the operator's llm max_tokens, when set),
// modelPreferences are ignored: the node has one model.
func (s *Service) samplingCreateMessage(ctx context.Context, params json.RawMessage) (any, error) {
	var p samplingParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	req, err := samplingRequest(p)
	if err != nil {
		return nil, err
	}
	if s.cfg.Model == nil {
		return nil, &jsonrpc.Error{Code: CodeModelUnavailable, Message: "no model configured on this node"}
	}
	resp, err := s.cfg.Model.Complete(ctx, req)
	if err != nil {
		s.log.Warn("sampling/createMessage", "err", err)
		return nil, &jsonrpc.Error{Code: CodeModelUnavailable, Message: "the model did not answer"}
	}
	stop := "endTurn"
	if resp.FinishReason == "length" {
		stop = "maxTokens"
	}
	return SamplingResult{Role: "assistant", Content: TextContent{Type: "text", Text: resp.Message.Content}, Model: resp.Model, StopReason: stop}, nil
}

func samplingRequest(p samplingParams) (llm.Request, error) {
	var req llm.Request
	if p.SystemPrompt != "" {
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleSystem, Content: p.SystemPrompt})
	}
	for i, m := range p.Messages {
		if m.Role != llm.RoleUser && m.Role != llm.RoleAssistant {
			return req, invalidPayload("messages[%d].role must be user or assistant", i)
		}
		if m.Content.Type != "text" {
			return req, invalidPayload("messages[%d].content.type must be text", i)
		}
		req.Messages = append(req.Messages, llm.Message{Role: m.Role, Content: m.Content.Text})
	}
	if len(p.Messages) == 0 {
		return req, invalidPayload("messages is required")
	}
	if p.MaxTokens < 0 {
		return req, invalidPayload("maxTokens must be a positive integer")
	}
	if t := p.Temperature; t != nil && (*t < 0 || *t > 2) {
		return req, invalidPayload("temperature must be between 0 and 2")
	}
	req.MaxTokens, req.Temperature = p.MaxTokens, p.Temperature
	return req, nil
}
