// Package schema reads Agent State Model schemas (Nuwa NIP-8): JSON Schema
// 2020-12 plus the x-asm annotations that say how a document is stored,
// merged and aged.
//
// Parse checks everything the runtime relies on and refuses the rest with
// an error wrapping ErrInvalidSchema:
//
//   - x-asm.container: object, map, list or log (default object), and
//     x-asm.crdt, which must be a CRDT that fits the container (the spec's
//     append_only is read as log_rga);
//   - x-crdt on top-level properties, checked against the crdt registry and
//     the property's JSON type (rga_text needs a string, counter a number);
//   - x-ttl and x-retention.window as strict ISO-8601 durations
//     (P[nY][nM][nW][nD][T[nH][nM][nS]]), x-retention.strategy
//     (evict_low_importance or drop_oldest), x-compression (br, zstd, gzip)
//     and x-visibility (private, shared, public; default private).
//
// The schema URI ($id) names the namespace: did:nuwa:core:<Model>#<ver> is
// core; did:nuwa:cap|app|user:<name>:state:<Name>#<ver> are cap, app and
// user; the ACP form did:nuwa:state:<name>#<ver> belongs to the cap
// namespace of the capability that declares it. Each namespace has its own
// tables (Namespace.Tables). Because those $id values are not valid 2020-12
// ids (they carry a fragment), a schema is compiled under a derived id,
// urn:agentnode:schema:<sha256 of the document>, and keeps its URI as its
// name. External $refs are refused.
//
// The three core models (ConversationLog, MemoryStore, AgentSettings) are
// embedded verbatim from the spec; NewRegistry starts with them.
//
// # Use
//
//	reg := schema.NewRegistry()
//	s, err := reg.Register(noteSchemaJSON, "did:nuwa:cap:note@1.0.0")
//	if err != nil { ... }             // errors.Is(err, schema.ErrInvalidSchema)
//	docs, ops, _ := s.Namespace.Tables() // "cap_note_docs", "cap_note_ops"
//	v, _ := schema.DecodeJSON(object)
//	if err := s.Validate(v); err != nil { ... }
package schema
