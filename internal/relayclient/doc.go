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
//     agentd/peers (one Conn per session, its own reconnect loop with
//     Backoff) and the CLI (cmd/agentnode's session and NIP-46 client,
//     with Options.Verify) use it.
//   - Relay reconnects on the next use after a drop (spacing failed dials
//     with a backoff) and answers "auth-required:" with its key. State
//     replication (agentd/state/replicate) and the kind-25910 client
//     (agentd/nostrrpc) use it.
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
package relayclient
