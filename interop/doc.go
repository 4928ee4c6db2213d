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
// Two more suites run against the real binary the same way:
// TestNostrToolsDM (dm.test.mjs): a person's NIP-17 DM sent with nostr-tools
// to an installed agent gets a reply nostr-tools decrypts (the node's model is
// a scripted OpenAI-compatible server); TestMCPSDKInterop (mcp.test.mjs): the
// TypeScript MCP SDK (@modelcontextprotocol/sdk) lists and calls the registry
// tools on /mcp after `agentnode cap publish`, and initializes against the
// Agent Context Protocol endpoint /acp (bearer token), lists its tools and
// finds the installed agent with agentSearch. The packages capability tests
// start @modelcontextprotocol/server-everything from here as a real MCP server.
//
// TestContextVMInterop (contextvm.test.mjs) and TestContextVMServerInterop
// (contextvm-server.test.mjs, contextvm-stock-server.mjs): the stock
// ContextVM SDK (@contextvm/sdk, MCP over Nostr) calls an agent through the
// node's relay with default settings, plaintext and encrypted, twice each in
// new processes, and finds it by its announcements; a stock ContextVM server
// and client talk through the node's relay and a plain khatru relay; an
// agent calls the stock server through a nostr:<npub> binding
// (docs/CONTEXTVM.md).
//
// TestReferenceNegentropyInterop (negentropy.test.mjs): hoytech's reference
// negentropy (JavaScript, vendored in negentropy/ at a named commit: it is
// not on npm), the protocol (0x61) strfry speaks for NIP-77, reconciles
// with the node as `strfry sync` does — NEG-OPEN/NEG-MSG/NEG-CLOSE, then
// REQ by ids and EVENT uploads — with events on both sides; the have/need
// ids it reports must be exactly the differing ones (docs/PEERS.md).
//
// The package holds no Go API; it exists for its tests.
package interop
