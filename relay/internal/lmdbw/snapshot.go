package lmdbw

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/nbd-wtf/go-nostr"
)

// ErrNoEnvironment: the directory holds no LMDB environment (no data.mdb).
var ErrNoEnvironment = errors.New("no event store")

// openReadOnly opens the environment in dir read-only, beside whatever
// process has it open for writing (LMDB's lock file coordinates readers
// and the writer across processes). A process must not open one
// environment twice: callers run in a process that has not opened dir.
func openReadOnly(dir string) (*lmdb.Env, error) {
	if _, err := os.Stat(filepath.Join(dir, "data.mdb")); err != nil {
		return nil, fmt.Errorf("%w in %s: %w", ErrNoEnvironment, dir, err)
	}
	env, err := lmdb.NewEnv()
	if err != nil {
		return nil, err
	}
	for _, set := range []func() error{
		func() error { return env.SetMaxDBs(maxDBs) },
		func() error { return env.SetMaxReaders(maxReaders) },
		func() error { return env.SetMapSize(defaultMapSize) },
		func() error { return env.Open(dir, lmdb.NoTLS|lmdb.Readonly, 0o644) },
	} {
		if err := set(); err != nil {
			env.Close()
			return nil, err
		}
	}
	return env, nil
}

// CopyCompact writes a compacted copy of the environment in dir to
// dstDir/data.mdb (mdb_env_copy2 with MDB_CP_COMPACT): one read
// transaction, so the copy is the store as of one commit, written while
// the store's owner keeps writing; free pages are left out, so the copy is
// as large as the data, never the sparse map size. dstDir must exist and
// hold no data.mdb.
func CopyCompact(dir, dstDir string) error {
	env, err := openReadOnly(dir)
	if err != nil {
		return err
	}
	defer env.Close()
	if err := env.CopyFlag(dstDir, lmdb.CopyCompact); err != nil {
		return fmt.Errorf("copy event store: %w", err)
	}
	return nil
}

// Each calls visit with every stored event, in storage order, inside one
// read transaction of the environment in dir (opened read-only: the
// store's owner may keep writing). It holds one event at a time; visit's
// error, or ctx's, ends the walk.
func Each(ctx context.Context, dir string, visit func(*nostr.Event) error) error {
	env, err := openReadOnly(dir)
	if err != nil {
		return err
	}
	defer env.Close()
	return env.View(func(txn *lmdb.Txn) error {
		txn.RawRead = true
		raw, err := txn.OpenDBI("raw", 0)
		if err != nil {
			return fmt.Errorf("%w: open database \"raw\": %w", ErrLayout, err)
		}
		return eachRaw(ctx, txn, raw, visit)
	})
}

// eachRaw walks the raw database with one cursor.
func eachRaw(ctx context.Context, txn *lmdb.Txn, raw lmdb.DBI, visit func(*nostr.Event) error) error {
	cur, err := txn.OpenCursor(raw)
	if err != nil {
		return err
	}
	defer cur.Close()
	for op := uint(lmdb.First); ; op = lmdb.Next {
		if err := ctx.Err(); err != nil {
			return err
		}
		_, v, err := cur.Get(nil, nil, op)
		if lmdb.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		evt, err := unmarshal(v)
		if err != nil {
			return err
		}
		if err := visit(evt); err != nil {
			return err
		}
	}
}

// Ping begins and ends a read transaction: the store can be read
// (readiness probes).
func (w *Writer) Ping() error {
	return w.env.View(func(*lmdb.Txn) error { return nil })
}
