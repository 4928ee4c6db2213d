// Package relay is agentnode's embedded Nostr relay: khatru wired to an LMDB
// event store and a bluge full-text index, with the policies that keep agent
// events well-formed (NIP-AE validation, size and rate limits, NIP-40 expiry,
// NIP-09 deletions that stay deleted), a bounded NIP-45 COUNT, NIP-50 search,
// a truthful NIP-11 document and the owner-verification HTTP endpoint.
//
// Writes go through one writer goroutine that commits whatever has queued
// in one LMDB transaction (group commit, relay/ingest.go): an OK is sent only
// once the event's transaction is durable, and stored events are announced
// (OnStored, live broadcast) in commit order. See docs/RELAY.md.
//
// With Config.Postgres the events live in PostgreSQL instead (relay/pgstore):
// the same hooks behind one storage seam (backend.go), one SaveBatch per
// group commit, and live broadcast and OnStored driven by the pgstore
// Listener, so that every instance on the database delivers every
// instance's events, in commit order (docs/POSTGRES.md, docs/SCALE.md).
//
// A Relay owns its storage and its background work: Open starts nothing but
// the stores and their writer, Close drains in-flight work and closes them.
//
//	r, err := relay.Open(ctx, relay.Config{DataDir: "./agentnode-data"})
//	if err != nil { ... }
//	defer r.Close(ctx)
//	srv := &http.Server{Addr: "127.0.0.1:7447", Handler: r}
//
// In-process users (agentd, the CLI's tests) call Publish, Query and Count
// instead of going through a websocket.
package relay
