// Package replicate carries Agent State Model ops between nodes as Nostr
// events, so that every node serving an owner converges on the same state
// (issue 5, item 9; docs/ASM.md "Replication").
//
// A Replicator holds an agent's key. It reads the store's op log
// (OpsSince) after each commit (store.Changed) and publishes the ops made
// on this replica for its owner's documents as kind-4290 events: one batch
// of op envelopes per (schema, memory scope, owner), in plaintext for
// public state and NIP-44 v2 encrypted, one event per reader with a "p"
// tag, for private state (the owning agent and its owner) and shared state
// (the owner and all its agents, from a Directory). It subscribes to the
// kind-4290 events addressed to its key, and to the public ones of its
// owner's agents, verifies each signature, decrypts, checks that the
// author may write the owner's state and applies the envelopes
// (ApplyRemote: at most once each, in any order). Cursors live in the
// store (asm_meta): a push watermark per relay and namespace, a pull
// cursor (created_at) per relay, so restarts and reconnects resume.
//
// Relays serve kind 4290 only to an authenticated (NIP-42) author or "p"
// reader (relay/policies.RequireAuthForKinds and friends); WSRelay answers
// the challenge with the replicator's key.
//
// # Use
//
//	rt, _ := state.Open(ctx, state.Options{Dir: dataDir})
//	remote := replicate.NewWSRelay("wss://relay.example", agentSecret, log)
//	defer remote.Close()
//	local := &replicate.Local{Relay: embeddedRelay} // *relay.Relay, in-process
//	rep, err := replicate.New(rt.Store(), replicate.Config{
//		SecretKey: agentSecret,
//		Owner:     ownerPubKey,
//		Directory: replicate.DirectoryFunc(agentsOf), // owner -> its agents
//		Schemas:   rt.Schemas(),
//		Links:     []replicate.Link{local.Link("local"), remote.Link()},
//	})
//	go rep.Run(ctx) // the caller owns the goroutine: cancel ctx, then wait
package replicate
