package lmdbw

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/PowerDNS/lmdb-go/lmdb"
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

// layoutDBs are the layout's named databases with their creation flags,
// in the order eventstore's initialize creates them.
var layoutDBs = []struct {
	name  string
	flags uint
}{
	{"settings", lmdb.Create},
	{"raw", lmdb.Create},
	{"created_at", multiIndex},
	{"id", lmdb.Create},
	{"kind", multiIndex},
	{"pubkey", multiIndex},
	{"pubkeyKind", multiIndex},
	{"tag", multiIndex},
	{"tag32", multiIndex},
	{"tagaddr", multiIndex},
	{"ptagKind", multiIndex},
	{"hllCache", lmdb.Create},
}

const multiIndex = lmdb.Create | lmdb.DupSort | lmdb.DupFixed

// Open opens the event store in dir, creating the directory and the
// layout (its databases and version record) when they are missing; a
// store of another layout version is refused (ErrLayout). mapSize 0 is
// eventstore's default (256 GiB, sparse).
//
// The environment is opened without MDB_WRITEMAP, which eventstore always
// sets: pages are then written through a writable mmap of a sparse file,
// and when the filesystem is full the page fault that needs a new block
// is a SIGBUS, which kills the process. Without it LMDB writes pages with
// pwrite at commit, and a full disk is an ENOSPC error that aborts the
// transaction (ErrDiskFull); the committed state is untouched. The lock
// file's blocks are reserved first for the same reason (LMDB writes its
// reader table through a shared map).
func Open(dir string, mapSize int64) (*Writer, error) {
	return open(dir, mapSize, 0)
}

// open is Open with extra environment flags (a benchmark compares
// MDB_WRITEMAP).
func open(dir string, mapSize int64, flags uint) (*Writer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := reserveFile(filepath.Join(dir, "lock.mdb"), lockReserve); err != nil {
		return nil, classify(fmt.Errorf("reserve lock file: %w", err))
	}
	env, err := newEnv(dir, mapSize, flags)
	if err != nil {
		return nil, classify(fmt.Errorf("open environment: %w", err))
	}
	w := &Writer{env: env}
	if err := w.init(); err != nil {
		env.Close()
		return nil, classify(err)
	}
	if err := growSparse(filepath.Join(dir, "data.mdb"), mapSize); err != nil {
		env.Close()
		return nil, fmt.Errorf("size data file: %w", err)
	}
	return w, nil
}

// growSparse extends the data file to the map size, sparse (no block is
// allocated), as eventstore's MDB_WRITEMAP open always did: every store
// written before this package opened its own environment has that size,
// and commits then fill holes of a file whose size does not change
// instead of extending it (measured: no slower, docs/BENCHMARKS.md). A
// larger file is left as it is.
func growSparse(path string, mapSize int64) error {
	if mapSize == 0 {
		mapSize = defaultMapSize
	}
	st, err := os.Stat(path)
	if err != nil || st.Size() >= mapSize {
		return err
	}
	return os.Truncate(path, mapSize)
}

// newEnv opens the environment in dir with the layout's settings and
// MDB_NOTLS (a read transaction may end on another thread) plus flags.
func newEnv(dir string, mapSize int64, flags uint) (*lmdb.Env, error) {
	env, err := lmdb.NewEnv()
	if err != nil {
		return nil, err
	}
	if mapSize == 0 {
		mapSize = defaultMapSize
	}
	for _, set := range []func() error{
		func() error { return env.SetMaxDBs(maxDBs) },
		func() error { return env.SetMaxReaders(maxReaders) },
		func() error { return env.SetMapSize(mapSize) },
		func() error { return env.Open(dir, lmdb.NoTLS|flags, 0o644) },
	} {
		if err := set(); err != nil {
			env.Close()
			return nil, err
		}
	}
	return env, nil
}

// init creates whatever is missing of the layout (on a complete layout it
// writes nothing), keeps the database handles (they stay valid after the
// transaction commits) and reads the last serial in use.
func (w *Writer) init() error {
	return w.env.Update(func(txn *lmdb.Txn) error {
		handles := make(map[string]lmdb.DBI, len(layoutDBs))
		for _, db := range layoutDBs {
			dbi, err := txn.OpenDBI(db.name, db.flags)
			if err != nil {
				return fmt.Errorf("%w: open database %q: %w", ErrLayout, db.name, err)
			}
			handles[db.name] = dbi
		}
		if err := checkVersion(txn, handles["settings"]); err != nil {
			return err
		}
		w.dbis = dbis{
			raw: handles["raw"], createdAt: handles["created_at"], id: handles["id"], kind: handles["kind"],
			pubkey: handles["pubkey"], pubkeyKind: handles["pubkeyKind"], tag: handles["tag"],
			tag32: handles["tag32"], tagAddr: handles["tagaddr"], ptagKind: handles["ptagKind"],
		}
		return w.loadSerial(txn)
	})
}

// checkVersion writes the layout version into a store that has none and
// refuses one of another version (eventstore would re-index it).
func checkVersion(txn *lmdb.Txn, settings lmdb.DBI) error {
	key := []byte{'v'}
	v, err := txn.Get(settings, key)
	if lmdb.IsNotFound(err) {
		val := binary.BigEndian.AppendUint16(nil, layoutVersion)
		return txn.Put(settings, key, append(val, 0, 0), 0)
	}
	if err != nil {
		return err
	}
	if len(v) < 2 || binary.BigEndian.Uint16(v) != layoutVersion {
		return fmt.Errorf("%w: layout version %x, want %d", ErrLayout, v, layoutVersion)
	}
	return nil
}

// loadSerial reads the highest serial in the raw database: new records
// get the ones after it (eventstore's lastId).
func (w *Writer) loadSerial(txn *lmdb.Txn) error {
	cur, err := txn.OpenCursor(w.dbis.raw)
	if err != nil {
		return err
	}
	defer cur.Close()
	k, _, err := cur.Get(nil, nil, lmdb.Last)
	if lmdb.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(k) != 4 {
		return fmt.Errorf("%w: raw key of %d bytes", ErrLayout, len(k))
	}
	w.lastSerial.Store(binary.BigEndian.Uint32(k))
	return nil
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
