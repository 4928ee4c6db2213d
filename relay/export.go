package relay

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/relay/internal/lmdbw"
)

// ErrNoEventStore: the data directory holds no LMDB event store.
var ErrNoEventStore = lmdbw.ErrNoEnvironment

// errStop ends an export walk early (the filter's limit was reached).
var errStop = errors.New("export: limit reached")

// ExportEvents calls visit with every event of the LMDB store in dataDir
// that matches filter (ids, authors, kinds, tags, since, until; a positive
// Limit caps the count), skipping NIP-40-expired events as queries do. It
// reads the store read-only in one read transaction, one event at a time,
// in storage order, so memory does not grow with the store, and it works
// while `agentnode serve` has the directory open (it takes no lock).
// Call it from a process that has not opened dataDir (LMDB forbids
// opening one environment twice in a process).
func ExportEvents(ctx context.Context, dataDir string, filter nostr.Filter, visit func(*nostr.Event) error) error {
	n := 0
	err := lmdbw.Each(ctx, filepath.Join(dataDir, "events"), func(evt *nostr.Event) error {
		if !filter.Matches(evt) || isExpired(evt, nostr.Now()) {
			return nil
		}
		if err := visit(evt); err != nil {
			return err
		}
		n++
		if filter.Limit > 0 && n >= filter.Limit {
			return errStop
		}
		return nil
	})
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// CopyEventStore writes a consistent, compacted copy of the LMDB store in
// dataDir into dst/events (created; it must not exist yet). It works while
// `agentnode serve` writes to the store: the copy is the store as of one
// commit. Call it from a process that has not opened dataDir.
func CopyEventStore(dataDir, dst string) error {
	out := filepath.Join(dst, "events")
	if err := os.Mkdir(out, 0o700); err != nil {
		return fmt.Errorf("backup events: %w", err)
	}
	return lmdbw.CopyCompact(filepath.Join(dataDir, "events"), out)
}

// CompactEventStore rewrites the LMDB store in dataDir without its free
// pages (a compacted copy put in the original's place). The store must not
// be open: it takes the data directory's lock and fails with
// ErrDataDirInUse while `agentnode serve` runs.
func CompactEventStore(dataDir string) (before, after int64, err error) {
	lock, err := lockDataDir(dataDir)
	if err != nil {
		return 0, 0, err
	}
	defer lock.release()
	events := filepath.Join(dataDir, "events")
	before, err = fileSize(filepath.Join(events, "data.mdb"))
	if err != nil {
		return 0, 0, fmt.Errorf("%w in %s", ErrNoEventStore, dataDir)
	}
	tmp := events + ".compact"
	if err := os.RemoveAll(tmp); err != nil {
		return 0, 0, err
	}
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return 0, 0, err
	}
	if err := lmdbw.CopyCompact(events, tmp); err != nil {
		os.RemoveAll(tmp)
		return 0, 0, err
	}
	if err := swapDir(events, tmp); err != nil {
		return 0, 0, err
	}
	after, err = fileSize(filepath.Join(events, "data.mdb"))
	return before, after, err
}

// swapDir puts dir's replacement next in its place: dir moves aside, next
// takes its name, then the old one is removed (a crash between the two
// renames leaves both directories, named, for the operator).
func swapDir(dir, next string) error {
	old := dir + ".old"
	if err := os.RemoveAll(old); err != nil {
		return err
	}
	if err := os.Rename(dir, old); err != nil {
		return err
	}
	if err := os.Rename(next, dir); err != nil {
		return fmt.Errorf("compact: the old store is in %s: %w", old, err)
	}
	return os.RemoveAll(old)
}

// fileSize is the number of bytes actually allocated to path on disk (a
// sparse file's apparent size says nothing).
func fileSize(path string) (int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return diskUsage(st), nil
}
