// Package llm is an OpenAI-compatible Chat Completions client with tools.
// It speaks the wire format OpenAI, Ollama, vLLM and llama.cpp's server
// share: POST {BaseURL}/chat/completions with model, messages, tools and
// tool_choice "auto", and reads choices[0].message, finish_reason and usage.
//
// Tool names outside ^[a-zA-Z0-9_-]{1,64}$ (state.create) are aliased on the
// way out (state_create) and mapped back on the way in, so callers only
// ever see their own names. 429 and 5xx answers are retried a bounded number
// of times with backoff that honours ctx.
//
// A use:
//
//	cfg, err := llm.ConfigFromEnv(os.Getenv) // AGENTNODE_LLM_MODEL, ...
//	if errors.Is(err, llm.ErrNoModel) { /* chat is off; the node runs without a model */ }
//	c, err := llm.New(cfg)
//	resp, err := c.Complete(ctx, llm.Request{
//		Messages: []llm.Message{{Role: llm.RoleUser, Content: "note: buy milk"}},
//		Tools:    tools, // []capabilities.ToolDef, names may contain dots
//	})
//	for _, tc := range resp.Message.ToolCalls { /* tc.Name is "state.create" again */ }
package llm
