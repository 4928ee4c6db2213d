// Package lmdbw is the relay's LMDB event store: it owns the environment,
// writes many events in one write transaction (one commit, one fsync, for
// a whole batch: group commit) and reads the layout for queries.
//
// The on-disk layout (the "raw" binary encoding and the id, pubkey, kind,
// pubkeyKind, tag, tag32, tagaddr, ptagKind and created_at indexes, the
// settings database's version record) is the one eventstore/lmdb v0.17.2
// defines (lmdb/save.go, lmdb/helpers.go, internal/binary/hybrid.go, by
// fiatjaf, public domain); this package implements it without that
// library, so a store written by either opens with the other. The layout
// is pinned by the package's tests: what the writer writes is compared
// key by key with what eventstore writes and read back by eventstore's own
// QueryEvents (in a child process), and testdata/v9store, a store written
// before this package owned its environment, opens and reads the same.
//
// Use:
//
//	w, err := lmdbw.Open(dir, 0) // no MDB_WRITEMAP: a full disk is an error, not a SIGBUS
//	defer w.Close()
//	ops := []*lmdbw.Op{{Action: lmdbw.Save, Event: a}, {Action: lmdbw.Replace, Event: b}}
//	err = w.Commit(ops) // one transaction; each op's Outcome tells what happened
//	err = w.Read(ctx, w.Plan(filter), since, until, visit) // newest first
package lmdbw
