package agentrpc_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentnode/agentnode/agentd/agentrpc"
	"github.com/agentnode/agentnode/capabilities/llm"
)

// TestSampling: sampling/createMessage is served by the configured model
// (the real llm client against an OpenAI-compatible server on loopback).
func TestSampling(t *testing.T) {
	var asked struct {
		Messages []llm.Message `json:"messages"`
	}
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		json.NewDecoder(r.Body).Decode(&asked)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"model":"tiny-1","choices":[{"message":{"role":"assistant","content":"all green"},"finish_reason":"stop"}],"usage":{"total_tokens":7}}`))
	}))
	defer provider.Close()
	model, err := llm.New(llm.Config{BaseURL: provider.URL + "/v1", Model: "tiny-1"})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	svc := agentrpc.New(agentrpc.Config{Token: testToken, Directory: f.dir, Tasks: f.tasks, Messenger: f.echo, Model: model, Logger: quiet})
	srv := httptest.NewServer(withToken(svc))
	defer srv.Close()

	var got agentrpc.SamplingResult
	mustCall(t, srv.URL, "sampling/createMessage", map[string]any{"systemPrompt": "be brief",
		"messages": []map[string]any{{"role": "user", "content": map[string]any{"type": "text", "text": "status?"}}}}, &got)
	if got.Content.Text != "all green" || got.Model != "tiny-1" || got.Role != "assistant" || got.StopReason != "endTurn" {
		t.Fatalf("sampling = %+v", got)
	}
	if len(asked.Messages) != 2 || asked.Messages[0].Role != "system" || asked.Messages[1].Content != "status?" {
		t.Fatalf("the model was asked %+v", asked.Messages)
	}
	var init agentrpc.InitializeResult
	mustCall(t, srv.URL, "initialize", map[string]any{"protocolVersion": "ACP-1.0"}, &init)
	if init.Capabilities.Sampling == nil {
		t.Fatal("initialize does not announce sampling on a node with a model")
	}
}
