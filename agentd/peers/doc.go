// Package peers keeps a node in sync with other relays (issue 3, item 6;
// docs/PEERS.md): it pulls from every peer what the local agents need
// (their definitions, lessons and comments on those, profiles and claims
// of sibling agents and owners), and pushes the node's own agents' events
// to every peer.
//
// For each peer a Syncer keeps one websocket (internal/relayclient) and, per
// Interests filter, a watermark: the newest created_at received once a
// catch-up completed. A session subscribes twice — live (limit 0, every
// new matching event) and catch-up (since the watermark minus an overlap,
// paged backwards while pages come back full) — checks the id of every
// event itself; an id already stored (the Syncer's recently-seen set, then
// the store) is a copy and costs nothing more (dedupe.go); any other event
// has its signature checked and is stored through LocalStore.Publish (a
// refusal is counted and skipped, a duplicate is fine); then it moves the
// watermarks, which Watermarks keeps (<data>/peers.json with
// FileWatermarks). When the peer goes away the syncer reconnects with
// exponential backoff and resumes from the watermarks.
//
// Pushing: on connect, the local events matching Outbox and newer than the
// peer's push watermarks are published oldest first; after that, Notify —
// called from the relay's store hook — queues each new outbox event for
// every connected peer. Nothing polls.
//
// # Use
//
//	marks, err := peers.OpenFileWatermarks(dataDir)
//	s := peers.New(peers.Config{
//		Peers:      []string{"wss://peer.example"},
//		Local:      embeddedRelay, // *relay.Relay: Publish + QuerySync
//		Interests:  daemon.Interests, // func() []nostr.Filter
//		Outbox:     daemon.Outbox,
//		Watermarks: marks,
//		Logger:     log,
//	})
//	// in the relay's store hook: s.Notify(evt)
//	// when agents, siblings or owners change: s.Refresh()
//	var wg sync.WaitGroup
//	wg.Go(func() { s.Run(ctx) }) // the caller owns it: cancel ctx, then wg.Wait()
//	for _, st := range s.Status() { fmt.Println(st.URL, st.Connected, st.Stored) }
package peers
