// Package nostrrpc carries JSON-RPC 2.0 between agents over Nostr kind
// 25910 (ephemeral, ContextVM style). A request is signed by the calling
// agent, p-tags the target and holds a NIP-44 v2 encrypted JSON-RPC
// request; the reply is signed by the target, p-tags the caller, e-tags
// the request event and holds the encrypted JSON-RPC response. This node's
// relay serves kind 25910 only to the AUTHed author or p-tagged reader
// (NIP-42, relay.DefaultRestrictedKinds) and to a filter naming the reader
// in #p (relay.DefaultAddressedKinds); the content is readable only by the
// two agents. This is agentnode's legacy dialect, kept for agent-to-agent
// calls: ContextVM (agentd/contextvm) puts plain JSON in the 25910 or
// gift-wraps it. See docs/BINDINGS.md for the wire format.
//
// Client calls remote agents (it implements bindings.A2ACaller); Server
// answers requests addressed to the node's local agents, seen through the
// node's relay (relay.Relay.OnEphemeral):
//
//	srv := nostrrpc.NewServer(nostrrpc.ServerConfig{
//		Source: rl, Publish: rl.Publish, Keys: keys.Lookup, Handler: agents,
//	})
//	go srv.Run(ctx) // answers until ctx ends
//
// PeerListener brings the Server the requests for its agents that arrive
// on other relays (the node's peers) and has them answered there:
//
//	pl := nostrrpc.NewPeerListener(nostrrpc.PeerListenerConfig{
//		Relays: peers, Agents: localAgents, Keys: keys.Lookup, Server: srv,
//	})
//	go pl.Run(ctx)
//
//	cl := nostrrpc.NewClient(nostrrpc.ClientConfig{Relays: []string{"wss://peer.example"}, Keys: keys.Secret})
//	defer cl.Close()
//	out, err := cl.CallAgent(ctx, myAgent, theirAgent, "receiveSimpleMessage", params)
package nostrrpc
