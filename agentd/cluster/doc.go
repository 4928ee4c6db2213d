// Package cluster is what `agentnode serve --postgres` adds to a node:
// several instances on one PostgreSQL database act as one node for the
// agents too (docs/SCALE.md, "Agents across instances"; docs/POSTGRES.md).
//
// The agents' keys, records, files, token, tasks, consent, directory
// registrations, DM ledger and ASM op log live in the database
// (agentd/agentpg), and each installed agent runs on the one instance
// holding its lease (agentd/lease); the Handover starts an agent here once
// its lease is gained and its state replayed. Every instance answers the
// HTTP endpoints: a request that needs the running agent and reaches
// another instance is forwarded to the holder's advertised URL (HTTP
// requests proxied whole, single /acp calls of a websocket or a batch and
// chats sent as JSON-RPC calls through one typed client), at most once
// (HeaderForwarded); while nobody holds a fresh lease the caller gets
// agentrpc.CodeAgentUnavailable, or 503 with Retry-After.
//
// A node without a database is Single, the no-op single-instance Cluster:
// serve wires one Cluster either way and never asks which.
package cluster
