package relay

import (
	"sync/atomic"
	"time"

	"github.com/blugelabs/bluge"
	"github.com/blugelabs/bluge/index"

	"github.com/agentnode/agentnode/internal/backoff"
)

// persistRetry spaces the retries of a failed search index persist.
var persistRetry = backoff.Backoff{Min: 50 * time.Millisecond, Max: time.Second}

// searchConfig is bluge's default configuration for path with a
// backoffDir in place of its file system directory.
func searchConfig(path string) bluge.Config {
	return bluge.DefaultConfigWithDirectory(func() index.Directory {
		return &backoffDir{FileSystemDirectory: index.NewFileSystemDirectory(path)}
	})
}

// backoffDir is bluge's file system directory whose failed Persist waits
// before it returns, longer after each consecutive failure. bluge v0.2.2's
// persister retries a failed persist at once and for ever
// (index/persister.go), so a full disk would spin a core until space
// returns; with the wait it retries at most once a second.
type backoffDir struct {
	*index.FileSystemDirectory
	failures atomic.Int32 // consecutive failed persists (the persister and the merger both persist)
}

// Persist persists an item; on an error it waits (until closeCh is closed
// at the latest) before returning the error.
func (d *backoffDir) Persist(kind string, id uint64, w index.WriterTo, closeCh chan struct{}) error {
	err := d.FileSystemDirectory.Persist(kind, id, w, closeCh)
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
