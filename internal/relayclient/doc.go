// Package relayclient is the project's one websocket client of a Nostr
// relay: NIP-01 publish (waiting for the OK), query until EOSE and
// subscribe, NIP-42 AUTH, write deadlines, a keepalive ping, and no panic
// when a connection drops mid-write or mid-subscription (it does not use
// go-nostr's Relay client; conn.go says why).
//
// Two levels:
//
//   - Conn is one connection (Dial): Publish, Query, Subscribe (a Sub
//     with Events, EOSE, Closed), Auth, Done/Err. It never reconnects.
//     agentd/peers (one Conn per session, reconnected by a backoff.Loop)
//     and the CLI (cmd/agentnode's session and NIP-46 client,
//     with Options.Verify) use it.
//   - Relay reconnects on the next use after a drop (spacing failed dials
//     with a backoff) and answers "auth-required:" with its key. State
//     replication (agentd/state/replicate) and the kind-25910 client
//     (agentd/nostrrpc) use it.
//
// A relay URL a stranger chose (a tag's hint, a relay list, a service
// URI) is dialled with Options.Guard (NewWith for a Relay): the
// node's internal/netguard policy, checked at dial time, so such a URL
// cannot reach loopback, private or link-local addresses. Dials of relays
// the operator named pass no Guard.
//
// Walk (pages.go) is the project's one relay-paging loop: it reads a
// filter's matches newest first from any Querier (a Conn, a Relay, the
// in-process relay, a source of agentd), page by page with an inclusive
// until, reading a second that holds more than a page through by the ids
// already read, with bounds per second, per walk and per query. Backoff
// and Sleep are internal/backoff's, kept here under their old names.
//
// Use:
//
//	r := relayclient.New("wss://relay.example", agentSK, log)
//	defer r.Close()
//	err := r.Publish(ctx, evt) // waits for the relay's OK
//	evts, err := r.Query(ctx, filter)
//
//	c, err := relayclient.Dial(ctx, "wss://relay.example", relayclient.Options{Verify: true})
//	defer c.Close()
//	sub, err := c.Subscribe(ctx, nostr.Filters{f})
//	defer sub.Close()
//	for { select { case evt := <-sub.Events: ...; case <-sub.EOSE: ...; case <-c.Done(): return c.Err() } }
//
//	done, err := relayclient.Walk(ctx, c, filter, relayclient.Paging{Page: 500, MaxEvents: 10_000},
//		func(page []*nostr.Event) error { ...; return nil })
package relayclient
