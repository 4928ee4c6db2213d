// Package bench measures agentnode's embedded relay against a plain khatru
// relay on the same LMDB event store, side by side, in one process, on one
// machine and one filesystem, and reports the figures as a table or JSON.
//
// RunRelay measures three things for both relays:
//
//   - durable ingest: signed kind-4129 lessons sent over one websocket
//     (go-nostr client) with a bounded window of in-flight events, counting
//     OK=true answers; events per second, and the per-event OK latency at
//     window 1;
//   - REQ->EOSE latency with many stored events (definitions, lessons and
//     comments, loaded in-process): "the lessons of a definition" and a
//     NIP-50 search over definitions (plain khatru has no search);
//   - memory: process RSS with the relay open and idle, and the RSS cost of
//     live subscriptions, per 1,000.
//
// RunIngest (agentnode bench ingest) measures durable ingest in three
// scenarios (one publisher with one event in flight, one with 64, several
// publishers on several websockets): events/s, OK latency p50/p99, process
// CPU seconds per 1,000 events and peak RSS, with a bare websocket client
// that counts only explicit OK answers. RunFanout (agentnode bench fanout)
// times one event reaching thousands of live subscriptions. RunRelay with
// Phases {"query"} is `agentnode bench query`.
//
// Use:
//
//	rep, err := bench.RunRelay(ctx, bench.RelayOptions{Events: 3000, Stored: 100_000, Subs: 2000})
//	if err != nil { ... }
//	rep.WriteTable(os.Stdout)
//
// The ingest phase runs on the real disk (RelayOptions.Dir): every accepted
// event is fsync'd by LMDB, which is what the figure is about. The query
// phase may run on a memory filesystem (RelayOptions.QueryDir, /dev/shm by
// default): query latency does not depend on fsync, and loading a large
// store through fsync'd commits would take far too long.
//
// Both relays run in this process, so memory figures are deltas measured one
// relay after the other, each against the process RSS just before it.
// Nothing here is a timed assertion: the tests only check that every figure
// was measured.
package bench
