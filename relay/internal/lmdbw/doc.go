// Package lmdbw writes events into the LMDB environment of an
// eventstore/lmdb v0.17.2 backend, many events in one write transaction:
// one commit, one fsync, for a whole batch (group commit). Queries keep
// going through the backend, on the same environment.
//
// The on-disk layout (the "raw" binary encoding and the id, pubkey, kind,
// pubkeyKind, tag, tag32, tagaddr, ptagKind and created_at indexes) is the
// one eventstore v0.17.2 defines (lmdb/save.go, lmdb/helpers.go,
// internal/binary/hybrid.go, by fiatjaf, public domain); this package
// re-implements it, because the backend's save and delete take a
// transaction only internally. The layout is pinned by the go.mod version
// and by the package's tests, which read every written event back through
// the backend's own QueryEvents.
//
// Use:
//
//	err := lmdbw.Init(backend) // not backend.Init(): no MDB_WRITEMAP (a full disk is an error, not a SIGBUS)
//	w, err := lmdbw.Open(backend)
//	ops := []*lmdbw.Op{{Action: lmdbw.Save, Event: a}, {Action: lmdbw.Replace, Event: b}}
//	err = w.Commit(ops) // one transaction; each op's Outcome tells what happened
//
// A Writer is not safe for concurrent Commit calls: the relay has one
// writer goroutine (relay/ingest.go).
package lmdbw
