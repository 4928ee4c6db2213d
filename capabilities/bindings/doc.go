// Package bindings executes the tools an Agent Capability Package declares
// but the runtime does not build in: its tool_bindings (Nuwa NIP-7, "Tool
// Bindings"). Four binding types are supported:
//
//	http_get     arguments -> query parameters of a GET to url
//	http_post    arguments -> JSON body of a POST to url
//	mcp_service  arguments -> an MCP tools/call of mcp_action on the server
//	             configured for service_uri (stdio command or streamable HTTP)
//	nuwa_a2a     arguments -> a JSON-RPC call of service_method on the agent
//	             target_did, through an A2ACaller (agentd/nostrrpc: kind 25910)
//
// HTTP bindings are guarded against server-side request forgery: every
// connection (redirects included) is checked at dial time against
// loopback, private, link-local, CGNAT, multicast and metadata addresses
// unless Config allows them. Failures are *capabilities.Error with a CAP
// code. See docs/BINDINGS.md.
//
// A use:
//
//	r := bindings.New(bindings.Config{
//		MCP: map[string]bindings.MCPEndpoint{
//			"mcp://everything": {Command: []string{"npx", "@modelcontextprotocol/server-everything"}},
//		},
//		A2A: rpcClient, // *nostrrpc.Client
//	})
//	defer r.Close()
//	out, err := r.Call(ctx, bindings.Call{Agent: agentHex, Tool: "echo",
//		Binding: pkg.Bindings["echo"], Args: json.RawMessage(`{"message":"hi"}`)})
package bindings
