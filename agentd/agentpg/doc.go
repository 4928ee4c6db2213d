// Package agentpg keeps the agent daemon's durable data in PostgreSQL, so
// that several agentnode instances on one database (`serve --postgres`)
// can each run any agent and a takeover (agentd/lease) loses nothing
// (docs/SCALE.md#agents-across-instances):
//
//   - Keys: agent secret keys (keystore.Keys), NIP-49 encrypted with the
//     node's passphrase exactly as the key files are;
//   - Agents: installed agents (agentd.Records); Files: their capability
//     files (agentd.AgentFiles); Token: the HTTP API token they share;
//   - Ledger: the NIP-17 DM answered-once ledger (dm.Ledger);
//   - Tasks and Consent: the task queue and approvals (tasks.Backend,
//     consent.Backend); Registrations: directory registrations
//     (directory.Registrations);
//   - OpLog, StateSync, StateRuntime: the ASM op log is the source of
//     truth, each instance's SQLite store a cache replayed from it;
//   - Handover: what an instance does when it gains or loses an agent's
//     lease; Listen: changes other instances cache (LISTEN/NOTIFY).
//
// Each store is the Postgres twin of the embedded default and passes the
// same conformance suite (keystoretest, recordstest, ledgertest,
// taskstest, consenttest, registrationstest, filestest). The schema is
// versioned (internal/pgmigrate): Open migrates under an advisory lock and
// refuses a database migrated by a newer binary (ErrSchemaTooNew).
//
//	db, err := agentpg.Open(ctx, url)
//	if err != nil { ... }
//	defer db.Close()
//	d, err := agentd.Open(ctx, agentd.Config{Keys: db.Keys(keystore.Options{Passphrase: pass}),
//		Records: db.Agents(), Files: db.Files(), Placement: leases, ...})
package agentpg
