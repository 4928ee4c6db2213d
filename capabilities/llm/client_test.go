package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentnode/agentnode/capabilities"
	"github.com/agentnode/agentnode/capabilities/llm"
	"github.com/agentnode/agentnode/capabilities/llm/llmtest"
)

func newClient(t *testing.T, srv *llmtest.Server, mod func(*llm.Config)) *llm.Client {
	t.Helper()
	cfg := llm.Config{BaseURL: srv.BaseURL(), Model: "scripted-model", APIKey: "sk-test"}
	if mod != nil {
		mod(&cfg)
	}
	c, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var noteTools = []capabilities.ToolDef{
	{Name: "state.create", Description: "create a note", Parameters: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}`)},
	{Name: "weather"}, // no parameters: sent as an empty object schema
}

func TestClient_Complete_WireFormat(t *testing.T) {
	temp := 0.2
	srv := llmtest.NewServer(t, func(r llmtest.Request) llmtest.Reply {
		return llmtest.Call(llmtest.ToolCall("call_9", "state_create", `{"title":"milk"}`))
	})
	c := newClient(t, srv, func(cfg *llm.Config) { cfg.Temperature = &temp; cfg.MaxTokens = 99 })
	history := []llm.Message{
		{Role: llm.RoleSystem, Content: "be brief"},
		{Role: llm.RoleUser, Content: "note milk"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "state.create", Arguments: `{"title":"x"}`}}},
		{Role: llm.RoleTool, ToolCallID: "c1", Name: "state.create", Content: `{"id":"n1"}`},
	}
	resp, err := c.Complete(context.Background(), llm.Request{Messages: history, Tools: noteTools})
	if err != nil {
		t.Fatal(err)
	}

	got := srv.Requests()[0]
	if got.Model != "scripted-model" || got.ToolChoice != "auto" || got.MaxTokens != 99 || got.Temperature == nil || *got.Temperature != 0.2 {
		t.Errorf("request = model %q tool_choice %q max_tokens %d temperature %v", got.Model, got.ToolChoice, got.MaxTokens, got.Temperature)
	}
	if h := got.Header.Get("Authorization"); h != "Bearer sk-test" {
		t.Errorf("Authorization = %q", h)
	}
	if names, want := got.ToolNames(), []string{"state_create", "weather"}; !slices.Equal(names, want) {
		t.Errorf("tool names = %v, want %v", names, want)
	}
	if p := string(got.Tools[1].Function.Parameters); !strings.Contains(p, `"type":"object"`) {
		t.Errorf("weather parameters = %s, want an object schema", p)
	}
	asst := got.Messages[2]
	if asst.Content != nil || len(asst.ToolCalls) != 1 || asst.ToolCalls[0].Function.Name != "state_create" ||
		asst.ToolCalls[0].Function.Arguments != `{"title":"x"}` || asst.ToolCalls[0].Type != "function" {
		t.Errorf("assistant history message = %+v", asst)
	}
	if tm := got.Messages[3]; tm.ToolCallID != "c1" || tm.Name != "state_create" || *tm.Content != `{"id":"n1"}` {
		t.Errorf("tool history message = %+v", tm)
	}

	want := llm.ToolCall{ID: "call_9", Name: "state.create", Arguments: `{"title":"milk"}`}
	if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0] != want {
		t.Errorf("tool calls = %+v, want [%+v]", resp.Message.ToolCalls, want)
	}
	if resp.FinishReason != "tool_calls" || resp.Usage.TotalTokens != 15 || resp.Message.Role != llm.RoleAssistant {
		t.Errorf("response = %+v", resp)
	}
}

func TestClient_Complete_NoToolsIsPlainChat(t *testing.T) {
	srv := llmtest.NewServer(t, func(r llmtest.Request) llmtest.Reply { return llmtest.Answer("hi") })
	resp, err := newClient(t, srv, nil).Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "hello"}}})
	if err != nil {
		t.Fatal(err)
	}
	if r := srv.Requests()[0]; len(r.Tools) != 0 || r.ToolChoice != "" {
		t.Errorf("plain chat sent tools %v tool_choice %q", r.ToolNames(), r.ToolChoice)
	}
	if resp.Message.Content != "hi" {
		t.Errorf("content = %q", resp.Message.Content)
	}
}

// Some local servers send arguments as an object, omit ids, or send
// content as parts.
func TestClient_Complete_LenientDecoding(t *testing.T) {
	srv := llmtest.NewServer(t, func(r llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Body: `{"choices":[{"message":{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],
			"tool_calls":[{"type":"function","function":{"name":"state_create","arguments":{"title":"milk"}}}]},"finish_reason":"tool_calls"}]}`}
	})
	resp, err := newClient(t, srv, nil).Complete(context.Background(), llm.Request{Tools: noteTools})
	if err != nil {
		t.Fatal(err)
	}
	tc := resp.Message.ToolCalls[0]
	if resp.Message.Content != "ab" || tc.ID == "" || tc.Name != "state.create" || tc.Arguments != `{"title":"milk"}` {
		t.Errorf("response = %+v", resp.Message)
	}
}

func TestClient_Complete_HTTPErrors(t *testing.T) {
	tests := []struct {
		name     string
		reply    llmtest.Reply
		status   int
		message  string
		attempts int
	}{
		{"openai style", llmtest.Error(401, "Incorrect API key provided"), 401, "Incorrect API key provided", 1},
		{"ollama style", llmtest.Reply{Status: 404, Body: `{"error":"model \"llama9\" not found"}`}, 404, `model "llama9" not found`, 1},
		{"plain body", llmtest.Reply{Status: 400, Body: "bad things"}, 400, "bad things", 1},
		{"5xx retried then given up", llmtest.Error(503, "overloaded"), 503, "overloaded", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t).Always(func(llmtest.Request) llmtest.Reply { return tt.reply })
			_, err := newClient(t, srv, nil).Complete(context.Background(), llm.Request{})
			var he *llm.HTTPError
			if !errors.As(err, &he) {
				t.Fatalf("err = %v, want *HTTPError", err)
			}
			if he.Status != tt.status || he.Message != tt.message || he.Attempts != tt.attempts {
				t.Errorf("got %+v, want status %d message %q attempts %d", he, tt.status, tt.message, tt.attempts)
			}
			if n := len(srv.Requests()); n != tt.attempts {
				t.Errorf("server saw %d requests, want %d", n, tt.attempts)
			}
			if !strings.Contains(err.Error(), tt.message) || !strings.Contains(err.Error(), "HTTP") {
				t.Errorf("error text %q lacks status or provider message", err)
			}
		})
	}
}

func TestClient_Complete_RetriesThenSucceeds(t *testing.T) {
	srv := llmtest.NewServer(t,
		func(llmtest.Request) llmtest.Reply { return llmtest.Error(500, "boom") },
		func(llmtest.Request) llmtest.Reply {
			return llmtest.Reply{Status: 429, Body: `{"error":{"message":"slow down"}}`, Header: http.Header{"Retry-After": {"0"}}}
		},
		func(llmtest.Request) llmtest.Reply { return llmtest.Answer("ok") },
	)
	resp, err := newClient(t, srv, nil).Complete(context.Background(), llm.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "ok" || len(srv.Requests()) != 3 {
		t.Errorf("content %q after %d requests", resp.Message.Content, len(srv.Requests()))
	}
}

func TestClient_Complete_BackoffHonoursContext(t *testing.T) {
	attempted := make(chan struct{}, 1)
	srv := llmtest.NewServer(t).Always(func(llmtest.Request) llmtest.Reply {
		select {
		case attempted <- struct{}{}:
		default:
		}
		return llmtest.Reply{Status: 429, Body: `{"error":{"message":"slow down"}}`, Header: http.Header{"Retry-After": {"3600"}}}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := newClient(t, srv, nil).Complete(ctx, llm.Request{})
		done <- err
	}()
	select {
	case <-attempted: // the first attempt landed; the client now waits out Retry-After
	case <-time.After(10 * time.Second):
		t.Fatal("no request within 10 s")
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1 (no retry after cancel)", n)
	}
}

func TestClient_Complete_NoChoices(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Body: `{"choices":[]}`} })
	if _, err := newClient(t, srv, nil).Complete(context.Background(), llm.Request{}); !errors.Is(err, llm.ErrNoChoices) {
		t.Errorf("err = %v, want ErrNoChoices", err)
	}
}
