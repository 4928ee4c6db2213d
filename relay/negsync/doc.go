// Package negsync reconciles this node's relay with another relay by
// NIP-77 negentropy, then moves the difference: the events only the other
// side has are fetched by id (down), the events only this side has are
// published to it (up). Only the differing ids and events cross the wire,
// not every event of the filter as a REQ catch-up would send.
//
// The local side is anything with the relay's in-process methods
// (*relay.Relay); the remote side is a relayclient.Conn:
//
//	conn, _ := relayclient.Dial(ctx, "wss://relay.example", relayclient.Options{Verify: true})
//	res, err := negsync.Sync(ctx, conn, rl, negsync.Options{Filter: nostr.Filter{Kinds: []int{4199}}, Dir: negsync.Both})
//
// A relay that does not speak NIP-77 yields ErrUnsupported (Fallback
// downloads by REQ instead, when the caller asks for it).
package negsync
