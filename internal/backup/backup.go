package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentnode/agentnode/relay"
)

// ErrTargetExists: the backup (or restore) target exists and is not empty.
var ErrTargetExists = errors.New("target exists and is not empty")

// skipped are data-directory entries a backup leaves out: the search
// index (rebuilt from the events), the pid lock file, and events/, which
// is copied by LMDB itself.
var skipped = map[string]bool{"search": true, "agentnode.pid": true, "events": true}

// Create writes a backup of the data directory dataDir into dst (created;
// it must not exist or be empty), safe while `agentnode serve` runs on
// dataDir. Call it from a process that has not opened dataDir's event
// store. It returns the manifest it wrote last.
func Create(ctx context.Context, dataDir, dst, version string) (*Manifest, error) {
	if err := newDir(dst); err != nil {
		return nil, err
	}
	if err := copyEvents(dataDir, dst); err != nil {
		return nil, err
	}
	if err := copyTree(ctx, dataDir, dst); err != nil {
		return nil, err
	}
	m := &Manifest{Format: 1, Version: version, CreatedAt: time.Now().UTC()}
	if err := listFiles(dst, func(rel string) error {
		f, err := describe(dst, rel)
		m.Files = append(m.Files, f)
		return err
	}); err != nil {
		return nil, err
	}
	return m, writeManifest(dst, m)
}

// copyEvents copies the LMDB store, if the directory has one (a
// PostgreSQL-mode data directory has none: back the database up with
// pg_dump).
func copyEvents(dataDir, dst string) error {
	if _, err := os.Stat(filepath.Join(dataDir, "events", "data.mdb")); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err := relay.CopyEventStore(dataDir, dst); err != nil {
		return err
	}
	copied := filepath.Join(dst, "events", "data.mdb")
	if err := os.Chmod(copied, 0o600); err != nil {
		return err
	}
	return syncFile(copied)
}

// copyTree copies every other file of dataDir: SQLite databases with
// VACUUM INTO, the rest byte for byte.
func copyTree(ctx context.Context, dataDir, dst string) error {
	absDst, _ := filepath.Abs(dst)
	return filepath.WalkDir(dataDir, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed since it was listed (a temporary file renamed over another)
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dataDir, path)
		if abs, _ := filepath.Abs(path); rel == "." || abs == absDst {
			return skipIf(d, rel != ".")
		}
		if skipped[filepath.ToSlash(rel)] || sqliteSidecar(rel) {
			return skipIf(d, true)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := copyEntry(ctx, path, filepath.Join(dst, rel), d); !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil // removed since it was listed
	})
}

// skipIf skips d (a whole directory) when skip is true.
func skipIf(d fs.DirEntry, skip bool) error {
	if skip && d.IsDir() {
		return filepath.SkipDir
	}
	return nil
}

// sqliteSidecar reports SQLite's -wal, -shm and -journal files (their
// content is in the VACUUM INTO copy).
func sqliteSidecar(rel string) bool {
	for _, s := range []string{"-wal", "-shm", "-journal"} {
		if strings.HasSuffix(rel, s) {
			return true
		}
	}
	return false
}

// copyEntry copies one directory entry (directories are created; links
// and special files are left out).
func copyEntry(ctx context.Context, src, dst string, d fs.DirEntry) error {
	switch {
	case d.IsDir():
		return os.Mkdir(dst, 0o700)
	case !d.Type().IsRegular():
		return nil
	case isSQLite(src):
		return vacuumInto(ctx, src, dst)
	default:
		return copyFile(src, dst)
	}
}

// copyFile copies src to a new file dst (mode 0600), synced.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Sync(), out.Close())
}

// syncFile flushes a file another writer (LMDB, SQLite) wrote.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}

// newDir creates dir (0700) unless it exists empty.
func newDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return os.MkdirAll(dir, 0o700)
	case err != nil:
		return err
	case len(entries) > 0:
		return fmt.Errorf("%w: %s", ErrTargetExists, dir)
	}
	return nil
}

// listFiles calls fn with the slash path of every regular file under dir
// but the manifest, in lexical order.
func listFiles(dir string, fn func(rel string) error) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if rel == ManifestFile {
			return nil
		}
		return fn(filepath.ToSlash(rel))
	})
}
