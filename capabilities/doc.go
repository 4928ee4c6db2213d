// Package capabilities holds what every part of the capability runtime
// shares: a tool as the model and CAP see it, the one interface that runs a
// tool call, and CAP's coded errors. The parts live in sub-packages:
//
//	acp/       Agent Capability Packages (.acp.yaml): parse, validate, sign, verify, kind 30199
//	registry/  the node's index of published packages: resolve and search
//	bindings/  http_get, http_post, mcp_service, nuwa_a2a
//	router/    the per-conversation capability stack and triggers
//	llm/       an OpenAI-compatible Chat Completions client with tools
//	modelloop/ message + prompt + tools -> model -> tool calls -> final answer
//	cap/       CAP list/describe/invoke with InvokeResult, over JSON-RPC
//	mcpserver/ the node's MCP endpoint: registry tools, an agent's capabilities as tools
//
// A use, from the agent daemon's side:
//
//	var tools capabilities.ToolCaller = agentTools // built-ins, then bindings
//	out, err := tools.CallTool(ctx, "state.create", args)
//	var ce *capabilities.Error
//	if errors.As(err, &ce) && ce.Code == capabilities.CodeInvalidInput { ... }
package capabilities
