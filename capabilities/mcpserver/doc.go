// Package mcpserver is the node's MCP endpoint (streamable HTTP, the
// official go-sdk). Two kinds of endpoint share one handler:
//
//	/mcp                   the registry: resolve_capability, search_capabilities
//	/mcp/agents/{agent}    that agent's CAP capabilities as MCP tools
//	                       (tools/list = capability.list, tools/call = capability.invoke;
//	                       each manifest a resource <capability_id>@<version>)
//
// AgentServer builds that agent server for any transport: ContextVM over
// Nostr (agentd/contextvm) serves the same one.
//
// Agent endpoints need a bearer token that Options.Authorize accepts.
// Bodies are bounded (Options.MaxBodyBytes, 413), idle sessions close
// (Options.SessionIdle), sessions that never made a call close sooner
// (Options.SessionUnused), and live sessions are capped in all
// (Options.MaxSessions, 503 with Retry-After) and per client address
// (Options.MaxSessionsPerIP, 429 with Retry-After), so that one address
// cannot take every place.
// Capability ids are not MCP-legal tool names, so each capability gets an
// alias (see ToolName); the tool's _meta carries its capability_id and
// version. docs/CAP.md and docs/REGISTRY.md describe the tools.
//
// A use (cmd wires it into serve):
//
//	h := mcpserver.New(reg, host, mcpserver.Options{Authorize: checkToken})
//	rel.Handle("/mcp", h)
//	rel.Handle("/mcp/", h)
package mcpserver
