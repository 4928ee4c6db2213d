// Package agentrpc is the node's Agent Context Protocol endpoint: JSON-RPC
// 2.0 over HTTP POST and WebSocket (package jsonrpc: batches,
// notifications, the standard error codes) with the ACP's agent/register,
// agent/unregister, agent/heartbeat, agent/error, agent/message and
// agent/delegate; resources/list and resources/read for agent://directory,
// agent://tasks and agent://metrics/{agentId}; tools/list and tools/call
// for agentSearch, taskAssign and agentEvaluate; sampling/createMessage
// served by the node's model; and an MCP-style initialize that negotiates
// "ACP-1.0" or MCP's "2025-06-18" / "2025-03-26". The -32001 family of
// errors and every shape are in docs/AGENT-CONTEXT-PROTOCOL.md. ("ACP" in
// capabilities/acp is the Agent Capability Package, another thing.)
//
// A message to a local agent runs it (Messenger: the router and model
// loop); to an agent on another node it travels as JSON-RPC over kind
// 25910 (Caller), and that node's Service answers it through ServeRPC with
// the same code. Delegated tasks live in agentd/tasks; privileged
// operations and revoked agents are agentd/consent's.
//
//	svc := agentrpc.New(agentrpc.Config{
//		Directory: dir, Tasks: taskStore, Consent: owner, Messenger: chat,
//		Caller: rpcClient, Model: model, Local: d.IsLocal, Keys: d.SecretKey,
//	})
//	go svc.Run(ctx) // resumes stored tasks, runs tasks until ctx ends
//	mux.Handle("/acp", svc) // POST and WebSocket
//	rpcServer := nostrrpc.NewServer(nostrrpc.ServerConfig{Handler: svc, ...})
package agentrpc
