package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The Chat Completions wire format, as OpenAI, Ollama, vLLM and llama.cpp
// speak it.

type wireRequest struct {
	Model       string        `json:"model"`
	Messages    []wireMessage `json:"messages"`
	Tools       []wireTool    `json:"tools,omitempty"`
	ToolChoice  string        `json:"tool_choice,omitempty"`
	Temperature *float64      `json:"temperature,omitempty"`
	MaxTokens   int           `json:"max_tokens,omitempty"`
}

type wireMessage struct {
	Role       string         `json:"role"`
	Content    *string        `json:"content"` // null for an assistant turn that only calls tools
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	Name       string         `json:"name,omitempty"`
}

type wireToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"` // a JSON string; some servers send an object
}

type wireTool struct {
	Type     string       `json:"type"`
	Function wireToolFunc `json:"function"`
}

type wireToolFunc struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type wireResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message      wireRespMessage `json:"message"`
		FinishReason string          `json:"finish_reason"`
	} `json:"choices"`
	Usage Usage `json:"usage"`
}

type wireRespMessage struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"` // string, null, or (rarely) an array of parts
	ToolCalls []wireToolCall  `json:"tool_calls"`
}

// encodeRequest builds the wire request, aliasing every tool name.
func encodeRequest(cfg Config, req Request, al *aliases) wireRequest {
	w := wireRequest{Model: cfg.Model, Temperature: cfg.Temperature, MaxTokens: cfg.MaxTokens}
	if req.Model != "" {
		w.Model = req.Model
	}
	if req.MaxTokens > 0 && (w.MaxTokens == 0 || req.MaxTokens < w.MaxTokens) {
		w.MaxTokens = req.MaxTokens
	}
	if req.Temperature != nil {
		w.Temperature = req.Temperature
	}
	for _, m := range req.Messages {
		w.Messages = append(w.Messages, encodeMessage(m, al))
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(bytes.TrimSpace(params)) == 0 || string(bytes.TrimSpace(params)) == "null" {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		w.Tools = append(w.Tools, wireTool{Type: "function", Function: wireToolFunc{
			Name: al.wire(t.Name), Description: t.Description, Parameters: params,
		}})
	}
	if len(w.Tools) > 0 {
		w.ToolChoice = "auto"
	}
	return w
}

func encodeMessage(m Message, al *aliases) wireMessage {
	content := m.Content
	w := wireMessage{Role: m.Role, Content: &content, ToolCallID: m.ToolCallID}
	if m.Name != "" {
		w.Name = al.wire(m.Name)
	}
	if m.Content == "" && len(m.ToolCalls) > 0 {
		w.Content = nil
	}
	for _, tc := range m.ToolCalls {
		args, _ := json.Marshal(tc.Arguments)
		w.ToolCalls = append(w.ToolCalls, wireToolCall{ID: tc.ID, Type: "function",
			Function: wireFunction{Name: al.wire(tc.Name), Arguments: args}})
	}
	return w
}

// decodeResponse maps the first choice back to caller names.
func decodeResponse(w wireResponse, al *aliases) (*Response, error) {
	if len(w.Choices) == 0 {
		return nil, ErrNoChoices
	}
	ch := w.Choices[0]
	content, err := decodeContent(ch.Message.Content)
	if err != nil {
		return nil, err
	}
	resp := &Response{FinishReason: ch.FinishReason, Usage: w.Usage, Model: w.Model,
		Message: Message{Role: RoleAssistant, Content: content}}
	for i, tc := range ch.Message.ToolCalls {
		id := tc.ID
		if id == "" { // some local servers omit ids; the loop needs one per call
			id = fmt.Sprintf("call_%d", i)
		}
		resp.Message.ToolCalls = append(resp.Message.ToolCalls, ToolCall{
			ID: id, Name: al.name(tc.Function.Name), Arguments: decodeArguments(tc.Function.Arguments),
		})
	}
	return resp, nil
}

// decodeContent accepts a string, null, or an array of {type:text,text}.
func decodeContent(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("llm: response content is neither text nor parts: %w", err)
	}
	var b bytes.Buffer
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// decodeArguments returns the arguments as JSON text: the string's value
// when the server sent a string (the standard), else the raw JSON.
func decodeArguments(raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	return string(bytes.TrimSpace(raw))
}
