// Package hostile is the hostile-client test suite: it builds the real
// `agentnode` binary, starts `agentnode serve` on a loopback port with a
// fresh data directory, and attacks it over real sockets the way a careless
// or hostile client on the open network would — a subscriber that never
// reads, pipelined COUNT/REQ/search floods, REQs the relay refuses, too
// many subscriptions, a SIGTERM in the middle of it all. Each test asserts
// what the client sees (OK, CLOSED and NOTICE reasons, the connection being
// cut) and the node's health afterwards (/healthz, a normal client's
// publish and query, the process's RSS).
//
// It has no non-test code; run it with
//
//	go test -tags libsecp256k1 ./hostile/
//
// docs/RELAY.md ("Facing the open network") lists the budgets it checks.
package hostile
