// Package dm lets people talk to the node's agents from any NIP-17 Nostr
// client (Damus, Amethyst, 0xchat, nostr-tools...).
//
// A Service watches the relay for kind 1059 gift wraps p-tagged to a local
// agent and queues them (a bounded intake that drops its oldest when
// full); unwrappers open each (1059 -> seal 13 -> rumor 14) with the
// agent's key as it comes, drop junk, forgeries (seal author != rumor
// author), the agent's own copies and anything not addressed to a local
// agent — without recording them — and ask the Gate what the sender's
// message may cost: known senders (the owner, an allowlist, siblings) wait
// in one lane, strangers within the budget (agentd/strangers) in another
// with fewer workers, strangers past it are dropped. A worker asks the
// Responder for an answer (the conversation is the sender's pubkey) and
// replies with a NIP-17 kind 14 rumor from the agent — ["p", sender],
// ["e", <rumor id>] — gift-wrapped to the sender and, as a copy, to the
// agent itself. Processed wrap ids, replies being published and a
// watermark are kept in a ledger (an append-only log beside a snapshot)
// so that a restart catches up on DMs stored while the node was down and
// answers each exactly once, wherever a stop cut an answer short. At
// start every local agent's kind 10050 DM relay list names the node's relay.
// docs/DM.md tells the whole story (clients, dedupe, strangers, rate
// limits, privacy).
//
// # Lifecycle
//
// New builds and starts nothing; Run(ctx) owns every goroutine (the
// dispatcher runs in it, the workers are waited for before it returns)
// and returns when ctx ends. Exactly-once does not rest on how a stop
// reaches the service but on the ledger: a reply's gift wraps are
// recorded as pending (signed, final ids) before the first is published,
// and the wrap as done only once both are stored. A stop that cuts a
// publish short — whichever of the two, stored or not — leaves the reply
// pending, and the next Run publishes the same events again (a duplicate
// the relay takes silently) instead of asking the Responder for a new
// answer; a stop before the reply is prepared leaves the wrap unrecorded,
// and the next Run answers it. agentd/dm/stop_test.go cuts a stop into
// each of those points.
//
// # Use
//
//	svc := dm.New(dm.Config{
//		Source:    r, // *relay.Relay: OnStored + QuerySync
//		Publish:   r.Publish,
//		Agents:    func() []string { return pubkeysOf(d.List()) },
//		Keys:      d.SecretKey,
//		Responder: chatResponder{d}, // Respond(ctx, agent, from, text)
//		StatePath: filepath.Join(dataDir, "dm", "state.json"), // state.log beside it
//		RelayURLs: []string{"wss://node.example.com"},
//		Gate:      budget, // *strangers.Budget: what strangers may cost
//	})
//	var wg sync.WaitGroup
//	wg.Go(func() { err = svc.Run(ctx) }) // the caller owns it: cancel ctx, then wg.Wait()
//	<-svc.Ready()                          // caught up on DMs stored while the node was down
package dm
