// Package store is the SQLite store of the Agent State Model: materialised
// documents, the op log they are built from, and compressed snapshots, in
// <data dir>/state.db (modernc.org/sqlite, pure Go).
//
// # Tables
//
// Every namespace (core, cap_<name>, app_<name>, user_<name>; see
// schema.Namespace) has its own three tables, so one capability's state is
// never in another's tables:
//
//   - <ns>_docs: one row per document, keyed by (schema_uri, id): the
//     materialised JSON (doc), scope (memory_scope), owner, agent,
//     visibility, created_at / updated_at (unix ms, from the ops' HLC),
//     deleted (tombstone) and size. ASM-QL queries run on this table;
//     expression indexes json_extract(doc, '$.path') cover the schema's
//     top-level scalars and x-index fields.
//   - <ns>_ops: the op log, one row per envelope with a local sequence, the
//     memory scope (indexed: one log per scope), the op id, replica and HLC
//     stamp; unique per (schema_uri, doc_id, op_id), so a redelivered op is
//     a no-op.
//   - <ns>_snaps: a document's ops folded into one blob compressed per the
//     schema's x-compression (br, zstd, gzip).
//
// The database runs in WAL mode with synchronous=FULL and a busy timeout;
// every change is one transaction (BEGIN IMMEDIATE).
//
// # Writing
//
// Write hands a Txn to a function that edits the document's CRDT (a root
// or_map per crdt.NewObject with the schema's field CRDTs) and records the
// ops; the store then materialises the document, runs the Txn's check
// (validation, size), and logs the ops and writes the row in one
// transaction. CRDTs are cached (LRU) and rebuilt from the log on a miss, so
// a restart loses nothing. ApplyRemote and OpsSince are the local core of
// replication: ops from another replica apply at most once each, in any
// order, and converge.
//
// # Use
//
//	st, err := store.Open(ctx, store.Config{Dir: dir, Schemas: registry})
//	defer st.Close(ctx)
//	doc, err := st.Write(ctx, sch, "n1", func(t *store.Txn) error {
//		t.Create(store.Meta{Scope: "sc:note", Owner: owner, Agent: agent})
//		op, err := t.Root().Set("title", "hello")
//		t.Record(op)
//		return err
//	})
//	envs, _ := st.OpsSince(ctx, "cap_note", 0, 1000) // ship to a peer
//	n, err := peer.ApplyRemote(ctx, envs)
package store
