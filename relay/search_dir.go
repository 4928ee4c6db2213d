package relay

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/blugelabs/bluge"
	"github.com/blugelabs/bluge/index"
	"github.com/blugelabs/bluge/index/lock"

	"github.com/agentnode/agentnode/internal/backoff"
)

// persistRetry spaces the retries of a failed search index persist.
var persistRetry = backoff.Backoff{Min: 50 * time.Millisecond, Max: time.Second}

// searchConfig is bluge's default configuration for path with a
// backoffDir in place of its file system directory.
func searchConfig(path string) bluge.Config {
	return bluge.DefaultConfigWithDirectory(func() index.Directory {
		return &backoffDir{FileSystemDirectory: index.NewFileSystemDirectory(path), path: path}
	})
}

// backoffDir is bluge's file system directory with two changes to Persist.
//
// It does not fsync. The index is derived data: LMDB holds every event,
// and an index not closed cleanly is discarded and rebuilt from LMDB at the
// next Open (openSearchIndex), so a segment file lost or torn by a crash
// costs nothing. bluge fsyncs every segment file it writes, each batch and
// each merge: with many relays on one disk those fsyncs queued with the
// LMDB commits that store and broadcast events. A clean close syncs the
// files once (syncIndexDir) before it marks the index clean.
//
// A failed Persist waits before it returns, longer after each consecutive
// failure: bluge v0.2.2's persister retries a failed persist at once and for
// ever (index/persister.go), so a full disk would spin a core until space
// returns; with the wait it retries at most once a second.
type backoffDir struct {
	*index.FileSystemDirectory
	path     string
	failures atomic.Int32 // consecutive failed persists (the persister and the merger both persist)
}

// Persist writes an item; on an error it waits (until closeCh is closed
// at the latest) before returning the error.
func (d *backoffDir) Persist(kind string, id uint64, w index.WriterTo, closeCh chan struct{}) error {
	err := d.write(kind, id, w, closeCh)
	if err == nil {
		d.failures.Store(0)
		return nil
	}
	wait := persistRetry.Delay(int(d.failures.Add(1)) - 1)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-closeCh:
	}
	return err
}

// write is FileSystemDirectory.Persist without the fsync.
func (d *backoffDir) write(kind string, id uint64, w index.WriterTo, closeCh chan struct{}) error {
	path := filepath.Join(d.path, fmt.Sprintf("%012x", id)+kind)
	f, err := lock.OpenExclusive(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	if _, err = w.WriteTo(f.File(), closeCh); err == nil {
		err = f.Close()
	} else {
		f.Close()
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}

// syncIndexDir fsyncs every file of the index directory, then the
// directory: what backoffDir.Persist wrote is durable before the index is
// marked clean.
func syncIndexDir(path string) error {
	entries, err := os.ReadDir(path)
	if err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	var errs []error
	for _, e := range entries {
		if e.Type().IsRegular() {
			errs = append(errs, syncFile(filepath.Join(path, e.Name())))
		}
	}
	errs = append(errs, syncFile(path))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	return nil
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	return errors.Join(err, f.Close())
}
