// Package llmtest is a scripted OpenAI-compatible Chat Completions server
// for tests. It speaks the real wire format over HTTP (httptest), decodes
// every request strictly (tool call arguments must be JSON strings, as
// OpenAI sends them), records it, and answers from a script.
//
// A use:
//
//	srv := llmtest.NewServer(t,
//		func(r llmtest.Request) llmtest.Reply {
//			return llmtest.Call(llmtest.ToolCall("call_1", "state_create", `{"title":"milk"}`))
//		},
//		func(r llmtest.Request) llmtest.Reply { return llmtest.Answer("Noted.") },
//	)
//	client, _ := llm.New(llm.Config{BaseURL: srv.URL + "/v1", Model: "test"})
package llmtest
