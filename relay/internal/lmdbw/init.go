package lmdbw

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"unsafe"

	"github.com/PowerDNS/lmdb-go/lmdb"
	eslmdb "github.com/fiatjaf/eventstore/lmdb"
)

var (
	// ErrDiskFull: the filesystem has no room for the write (ENOSPC or
	// EDQUOT); nothing of the transaction was written.
	ErrDiskFull = errors.New("disk full")
	// ErrMapFull: the environment reached its map size (MDB_MAP_FULL).
	ErrMapFull = errors.New("store map full")
)

// Layout constants of eventstore v0.17.2's initialize (lmdb/lib.go) and
// migrations (lmdb/migration.go).
const (
	maxDBs         = 12
	maxReaders     = 1000
	defaultMapSize = 1 << 38
	layoutVersion  = 9
	// lockReserve covers LMDB's lock file for maxReaders readers (64 bytes
	// a slot, plus the header), rounded up.
	lockReserve = 128 << 10
)

// layoutDBs are the backend's named databases in the order its initialize
// opens them (that order fixes the DBI handles) with the backend field
// that holds each handle and its creation flags.
var layoutDBs = []struct {
	name, field string
	flags       uint
}{
	{"settings", "settingsStore", lmdb.Create},
	{"raw", "rawEventStore", lmdb.Create},
	{"created_at", "indexCreatedAt", multiIndex},
	{"id", "indexId", lmdb.Create},
	{"kind", "indexKind", multiIndex},
	{"pubkey", "indexPubkey", multiIndex},
	{"pubkeyKind", "indexPubkeyKind", multiIndex},
	{"tag", "indexTag", multiIndex},
	{"tag32", "indexTag32", multiIndex},
	{"tagaddr", "indexTagAddr", multiIndex},
	{"ptagKind", "indexPTagKind", multiIndex},
	{"hllCache", "hllCache", lmdb.Create},
}

const multiIndex = lmdb.Create | lmdb.DupSort | lmdb.DupFixed

// Init opens b's environment like b.Init does, but leaves it open without
// MDB_WRITEMAP. eventstore always opens with MDB_WRITEMAP: pages are then
// written through a writable mmap of a sparse file, and when the
// filesystem is full the page fault that needs a new block is a SIGBUS,
// which kills the process. Without it LMDB writes pages with pwrite at
// commit, and a full disk is an ENOSPC error that aborts the transaction
// (ErrDiskFull); the committed state is untouched.
//
// Steps, none of which writes through a writable map: reserve the lock
// file's blocks (LMDB writes its reader table through a shared map too);
// create the layout (databases, version) in an environment without
// MDB_WRITEMAP, so that b.Init finds nothing to write; run b.Init (it opens
// with MDB_WRITEMAP and only reads); reopen the environment without
// MDB_WRITEMAP and put it in b's place.
func Init(b *eslmdb.LMDBBackend) error {
	if err := os.MkdirAll(b.Path, 0o755); err != nil {
		return err
	}
	if err := reserveFile(filepath.Join(b.Path, "lock.mdb"), lockReserve); err != nil {
		return classify(fmt.Errorf("reserve lock file: %w", err))
	}
	if err := createLayout(b); err != nil {
		return classify(fmt.Errorf("create layout: %w", err))
	}
	if err := b.Init(); err != nil {
		return err
	}
	return classify(reopen(b))
}

// newEnv opens an environment on b's path with the backend's settings,
// without MDB_WRITEMAP.
func newEnv(b *eslmdb.LMDBBackend) (*lmdb.Env, error) {
	env, err := lmdb.NewEnv()
	if err != nil {
		return nil, err
	}
	size := b.MapSize
	if size == 0 {
		size = defaultMapSize
	}
	for _, set := range []func() error{
		func() error { return env.SetMaxDBs(maxDBs) },
		func() error { return env.SetMaxReaders(maxReaders) },
		func() error { return env.SetMapSize(size) },
		func() error { return env.Open(b.Path, lmdb.NoTLS, 0o644) },
	} {
		if err := set(); err != nil {
			env.Close()
			return nil, err
		}
	}
	return env, nil
}

// createLayout creates whatever is missing of the backend's databases and
// version record. On a complete layout it writes nothing.
func createLayout(b *eslmdb.LMDBBackend) error {
	env, err := newEnv(b)
	if err != nil {
		return err
	}
	defer env.Close()
	return env.Update(func(txn *lmdb.Txn) error {
		var settings lmdb.DBI
		for i, db := range layoutDBs {
			dbi, err := txn.OpenDBI(db.name, db.flags)
			if err != nil {
				return err
			}
			if i == 0 {
				settings = dbi
			}
		}
		key := []byte{'v'}
		if _, err := txn.Get(settings, key); !lmdb.IsNotFound(err) {
			return err
		}
		val := binary.BigEndian.AppendUint16(nil, layoutVersion)
		return txn.Put(settings, key, append(val, 0, 0), 0)
	})
}

// reopen closes the environment b.Init opened and puts one opened without
// MDB_WRITEMAP in its place, checking that every database handle b holds
// names the same database in the new environment. On an error nothing is
// left open.
func reopen(b *eslmdb.LMDBBackend) error {
	field := reflect.ValueOf(b).Elem().FieldByName("lmdbEnv")
	if !field.IsValid() || field.Type() != reflect.TypeFor[*lmdb.Env]() {
		return fmt.Errorf("%w: eventstore/lmdb has no lmdbEnv *lmdb.Env field", ErrLayout)
	}
	slot := (**lmdb.Env)(unsafe.Pointer(field.UnsafeAddr()))
	(*slot).Close()
	*slot = nil
	env, err := newEnv(b)
	if err != nil {
		return fmt.Errorf("reopen without writemap: %w", err)
	}
	if err := sameHandles(b, env); err != nil {
		env.Close()
		return err
	}
	*slot = env
	return nil
}

// sameHandles opens the layout's databases in env in the backend's order
// and compares each handle with the one b holds.
func sameHandles(b *eslmdb.LMDBBackend, env *lmdb.Env) error {
	v := reflect.ValueOf(b).Elem()
	// A write transaction, so that the handles stay open after it (it
	// changes nothing, so its commit writes nothing).
	return env.Update(func(txn *lmdb.Txn) error {
		for _, db := range layoutDBs {
			dbi, err := txn.OpenDBI(db.name, 0)
			if err != nil {
				return fmt.Errorf("%w: open database %q: %w", ErrLayout, db.name, err)
			}
			f := v.FieldByName(db.field)
			if !f.IsValid() || f.Type() != reflect.TypeFor[lmdb.DBI]() || lmdb.DBI(f.Uint()) != dbi {
				return fmt.Errorf("%w: database %q is not the backend's %s", ErrLayout, db.name, db.field)
			}
		}
		return nil
	})
}

// classify marks err with ErrDiskFull or ErrMapFull when it is one.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var op *lmdb.OpError
	errno := err
	if errors.As(err, &op) {
		errno = op.Errno
	}
	switch {
	case errors.Is(errno, syscall.ENOSPC), errors.Is(errno, syscall.EDQUOT):
		return fmt.Errorf("%w: %w", ErrDiskFull, err)
	case lmdb.IsMapFull(errno):
		return fmt.Errorf("%w: %w", ErrMapFull, err)
	}
	return err
}
