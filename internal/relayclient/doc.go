// Package relayclient is the project's websocket client of a Nostr relay:
// NIP-01 publish, query and subscribe, NIP-42 AUTH with one key answered
// on "auth-required:", a reconnect on the next use after a drop, write
// deadlines and a keepalive ping, and no panic when a connection drops
// mid-write (it does not use go-nostr's Relay client; conn.go says why).
// State replication (agentd/state/replicate) and the kind-25910 client
// (agentd/nostrrpc) use it.
//
//	r := relayclient.New("wss://relay.example", agentSK, log)
//	defer r.Close()
//	err := r.Publish(ctx, evt) // waits for the relay's OK
//	evts, err := r.Query(ctx, filter)
package relayclient
