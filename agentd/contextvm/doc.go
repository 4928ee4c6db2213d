// Package contextvm is a small Go implementation of ContextVM: MCP
// (JSON-RPC 2.0) carried in Nostr events, as the reference TypeScript SDK
// (@contextvm/sdk) speaks it. docs/CONTEXTVM.md describes the behaviour.
//
// The wire (envelope.go, kinds.go): a kind-25910 event whose content is
// the JSON-RPC message, p-tagging the recipient (and e-tagging the
// request, in a response); encrypted, that signed 25910 NIP-44-encrypted
// inside a gift wrap from a one-time key — kind 1059 (CEP-4) or 21059
// (CEP-19). Open reads either; NewMessage, Wrap and Seal build them. The
// JSON-RPC types are the MCP go-sdk's (jsonrpc.Message).
//
// Server answers the messages addressed to local agents: each (agent,
// client pubkey) pair is one MCP session of an mcp.Server that Build
// returns (agentnode builds it with mcpserver.AgentServer, the server of
// /mcp/agents/{agent}), with the access check, the strangers' budget, the
// encryption policy, replay memory, and bounds on sessions and requests
// in flight. It is fed the events a relay accepts:
//
//	srv := contextvm.NewServer(contextvm.ServerConfig{
//		Keys: localKey, Build: buildAgentServer, Publish: rl.Publish,
//	})
//	rl.OnEphemeral(srv.Offer) // 25910, 21059
//	rl.OnStored(srv.Offer)    // 1059
//	go srv.Run(ctx)
//
// ClientTransport is the client side, an mcp.Transport for the go-sdk's
// mcp.Client:
//
//	t := &contextvm.ClientTransport{Relays: relays, SecretKey: sk, Server: serverPubkey}
//	sess, err := mcp.NewClient(impl, nil).Connect(ctx, t, nil)
//
// Announcements builds a server's CEP-6 announcements (kinds 11316-11320)
// and its NIP-65 relay list from the server itself; Retraction deletes
// them. ParseServerURI reads nostr:<npub> and nostr:<nprofile> addresses.
package contextvm
