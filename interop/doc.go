// Package interop is agentnode's independent-client interop suite: a client
// the project does not control (nostr-tools, the JavaScript library most Nostr
// apps are built on) talks to a real `agentnode serve` over a real websocket.
//
// It checks what other software sees of the relay: every NIP-AE kind
// (definitions in both shapes, nudges, lessons, lesson comments, agent
// profiles, owner claims) round-trips byte for byte and verifies; a lesson
// published by the agentnode CLI reaches a live nostr-tools subscription;
// malformed agent events are refused with "invalid:"; deleted events stay
// deleted ("blocked:"); NIP-45 COUNT is exact; NIP-50 search finds a
// definition by its description; NIP-11 advertises the NIPs and limits.
//
// The Go test TestNostrToolsInterop builds the binary, starts
// `agentnode serve` on a free port with a temporary data directory, runs
// `node --test relay.test.mjs` against it and finally checks that the server
// shuts down cleanly on SIGTERM. It needs node (20+) and the npm packages
// pinned in package-lock.json:
//
//	cd interop && npm ci --no-audit --no-fund   # or: make test
//	go test -tags libsecp256k1 ./interop -run TestNostrToolsInterop -v
//
// Against a relay you already run:
//
//	cd interop && RELAY_URL=ws://127.0.0.1:7447 AGENTNODE_BIN=$(which agentnode) npm test
//
// The package holds no Go API; it exists for its tests.
package interop
