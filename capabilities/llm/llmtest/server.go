package llmtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Request is a chat completion request as the server received it.
type Request struct {
	Model       string      `json:"model"`
	Messages    []Message   `json:"messages"`
	Tools       []Tool      `json:"tools"`
	ToolChoice  string      `json:"tool_choice"`
	Temperature *float64    `json:"temperature"`
	MaxTokens   int         `json:"max_tokens"`
	Header      http.Header `json:"-"`
	Raw         []byte      `json:"-"` // the body exactly as received
}

// Message is one wire message.
type Message struct {
	Role       string     `json:"role"`
	Content    *string    `json:"content"`
	ToolCalls  []WireCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Name       string     `json:"name,omitempty"`
}

// WireCall is one tool call on the wire.
type WireCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"` // a JSON string, as OpenAI sends it
	} `json:"function"`
}

// Tool is one offered tool on the wire.
type Tool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// ToolNames returns the offered tools' wire names.
func (r Request) ToolNames() []string {
	out := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		out[i] = t.Function.Name
	}
	return out
}

// Last returns the last message.
func (r Request) Last() Message {
	if len(r.Messages) == 0 {
		return Message{}
	}
	return r.Messages[len(r.Messages)-1]
}

// Step answers one request.
type Step func(Request) Reply

// Reply is an HTTP status and a JSON body.
type Reply struct {
	Status int
	Body   any // marshalled as JSON; a string is sent raw
	Header http.Header
}

// Server is a scripted Chat Completions endpoint at URL + "/v1".
type Server struct {
	*httptest.Server
	t        testing.TB
	mu       sync.Mutex
	script   []Step
	always   Step
	requests []Request
}

// NewServer starts a server answering the i-th request with steps[i]; it
// is closed when the test ends. A request past the script fails the test
// unless Always set a fallback.
func NewServer(t testing.TB, steps ...Step) *Server {
	s := &Server{t: t, script: steps}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Always answers every request past the script with step.
func (s *Server) Always(step Step) *Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.always = step
	return s
}

// BaseURL is the value for llm.Config.BaseURL.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) serve(w http.ResponseWriter, hr *http.Request) {
	if hr.Method != http.MethodPost || hr.URL.Path != "/v1/chat/completions" {
		s.t.Errorf("llmtest: unexpected %s %s", hr.Method, hr.URL.Path)
		writeReply(w, Error(http.StatusNotFound, "not found"))
		return
	}
	var req Request
	raw, err := io.ReadAll(hr.Body)
	if err == nil {
		err = json.Unmarshal(raw, &req)
	}
	if err != nil {
		s.t.Errorf("llmtest: request is not the chat completions format: %v", err)
		writeReply(w, Error(http.StatusBadRequest, err.Error()))
		return
	}
	req.Header, req.Raw = hr.Header.Clone(), raw
	writeReply(w, s.next(req)(req))
}

func (s *Server) next(req Request) Step {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := len(s.requests)
	s.requests = append(s.requests, req)
	switch {
	case i < len(s.script):
		return s.script[i]
	case s.always != nil:
		return s.always
	}
	s.t.Errorf("llmtest: request %d is past the script (%d steps)", i+1, len(s.script))
	return func(Request) Reply { return Error(http.StatusInternalServerError, "script exhausted") }
}

func writeReply(w http.ResponseWriter, r Reply) {
	for k, vs := range r.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if r.Status == 0 {
		r.Status = http.StatusOK
	}
	w.WriteHeader(r.Status)
	if s, ok := r.Body.(string); ok {
		_, _ = w.Write([]byte(s))
		return
	}
	_ = json.NewEncoder(w).Encode(r.Body)
}

// Answer is a final text answer.
func Answer(text string) Reply {
	return completion(map[string]any{"role": "assistant", "content": text}, "stop")
}

// Call is an assistant turn that calls tools (content null).
func Call(calls ...map[string]any) Reply {
	return completion(map[string]any{"role": "assistant", "content": nil, "tool_calls": calls}, "tool_calls")
}

// ToolCall builds one wire tool call; name is the wire (aliased) name.
func ToolCall(id, name, arguments string) map[string]any {
	return map[string]any{"id": id, "type": "function",
		"function": map[string]any{"name": name, "arguments": arguments}}
}

// Error is an OpenAI-style error answer.
func Error(status int, message string) Reply {
	return Reply{Status: status, Body: map[string]any{"error": map[string]any{
		"message": message, "type": strings.ToLower(http.StatusText(status)), "code": nil}}}
}

func completion(msg map[string]any, finish string) Reply {
	return Reply{Body: map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "model": "scripted",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
	}}
}
