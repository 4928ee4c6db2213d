// Package backup makes and restores consistent copies of an agentnode data
// directory while `agentnode serve` runs on it:
//
//   - events/ (LMDB): a compacted copy taken in one read transaction
//     (mdb_env_copy2 with MDB_CP_COMPACT, relay.CopyEventStore), as large as
//     the data, never the sparse map size;
//   - every SQLite file (state.db, agents/tasks.db, agents/consent.db):
//     VACUUM INTO, a transactionally consistent copy of a live database;
//   - every other file (keys, agent records, api.token, the DM ledger, the
//     registry's seen log): copied as it is;
//   - search/ is left out (it is rebuilt from the events on the first open)
//     and so are the pid lock file and SQLite's -wal/-shm files.
//
// A backup directory ends with backup.json, the manifest: the size and
// SHA-256 of every file. Restore checks all of them before it writes
// anything, and writes into a new directory only.
//
//	m, err := backup.Create(ctx, "./agentnode-data", "/backups/2026-11-27", version)
//	err = backup.Restore(ctx, "/backups/2026-11-27", "./agentnode-data-restored")
package backup
