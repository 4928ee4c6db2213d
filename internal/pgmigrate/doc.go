// Package pgmigrate brings one schema (a named set of tables) of a
// PostgreSQL database to the version a binary knows: versioned steps applied
// in order, each in its own transaction with its version recorded, under a
// session advisory lock so that instances starting at once migrate one after
// the other. A database whose schema is newer than the binary is refused
// (ErrTooNew), so an old binary never writes to a schema it does not know.
//
// Every schema of the project uses it: the relay's (relay/pgstore) and the
// agent daemon's (agentd/lease, agentd/agentpg):
//
//	var schema = pgmigrate.Schema{
//		Name:  "lease",                       // versions in lease_schema
//		Lock:  0x61676e64_6c656173,           // pg_advisory_lock key
//		Steps: []string{`CREATE TABLE ...`},  // append only, never edit
//	}
//	if err := schema.Migrate(ctx, pool); errors.Is(err, pgmigrate.ErrTooNew) { ... }
package pgmigrate
