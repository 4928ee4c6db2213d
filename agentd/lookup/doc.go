// Package lookup finds events the node lacks where they live: on its
// peers, on the author's NIP-65 write relays (kind 10002) and on relays it
// was hinted, and stores what it found in the local relay so that the next
// answer is local (issue 23; docs/PEERS.md, "On-demand lookups").
//
// Every lookup is bounded, because a stranger's request can cause one
// (GET /api/verify/<any key>): at most Config.MaxRelays relays per lookup,
// each asked within Config.Timeout; a per-relay budget of queries per
// minute; at most Config.MaxInflight lookups at once (the rest answer from
// the local store alone); and a negative cache, so that asking again for
// what was not found costs nothing until it expires. Found events are
// checked (id, signature, the filter) before they are stored.
//
// Querier wraps the local relay for readers such as relay.VerifyAgent:
// a query for profiles (kind 0), owner claims (14199) or relay lists
// (10002) of named authors is answered locally, and the authors the local
// store has nothing for are looked up (the relay hints of "p" tags it has
// returned, such as an owner's claims naming where its agents live, are
// asked too). Source names the relay an event
// was fetched from, so that a verdict can say where its evidence came from.
//
//	lk := lookup.New(lookup.Config{Local: rl, Peers: func() []string { return peers }})
//	v, err := relay.VerifyAgent(ctx, lk.Querier(), agent)
//	from := lk.Source(v.Events.Profile.ID) // "wss://peer.example" or ""
package lookup
