// Package agentpg keeps the agent daemon's durable data in PostgreSQL, so
// that several agentnode instances on one database (`serve --postgres`)
// can each run any agent and a takeover (agentd/lease) loses nothing:
//
//   - Keys: agent secret keys (keystore.Keys), NIP-49 encrypted with the
//     node's passphrase exactly as the key files are;
//   - Agents: installed agents (agentd.Records);
//   - Ledger: the NIP-17 DM answered-once ledger (dm.Ledger);
//   - Tasks and Consent rows (tasks.Backend, consent.Backend);
//   - OpLog: the ASM op log (the source of truth of agent state; each
//     instance's SQLite store is a cache replayed from it, see OpLog).
//
// Each is the Postgres twin of the embedded default and passes the same
// conformance suite (keystoretest, recordstest, ...). The schema is
// versioned (internal/pgmigrate): Open migrates under an advisory lock and
// refuses a database migrated by a newer binary (ErrSchemaTooNew).
//
//	db, err := agentpg.Open(ctx, url)
//	if err != nil { ... }
//	defer db.Close()
//	keys := db.Keys(keystore.Options{Passphrase: pass})
//	records := db.Agents()
package agentpg
