package backup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// Restore checks the backup in src against its manifest, then copies it
// into dataDir, which must not exist or be empty. The files go into a
// sibling directory first, renamed to dataDir once all are written, so an
// interrupted restore leaves no half data directory. The search index is
// rebuilt by the first `agentnode serve`.
func Restore(ctx context.Context, src, dataDir string) (*Manifest, error) {
	m, err := Verify(src)
	if err != nil {
		return nil, err
	}
	if err := newDir(dataDir); err != nil {
		return nil, err
	}
	tmp := filepath.Clean(dataDir) + ".restoring"
	if err := os.RemoveAll(tmp); err != nil {
		return nil, err
	}
	if err := restoreFiles(ctx, m, src, tmp); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	if err := os.Remove(dataDir); err != nil { // empty: newDir checked
		return nil, err
	}
	return m, os.Rename(tmp, dataDir)
}

// restoreFiles copies every file the manifest lists into dir.
func restoreFiles(ctx context.Context, m *Manifest, src, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, f := range m.Files {
		if err := ctx.Err(); err != nil {
			return err
		}
		rel := filepath.FromSlash(f.Path)
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o700); err != nil {
			return err
		}
		if err := copyFile(filepath.Join(src, rel), filepath.Join(dir, rel)); err != nil {
			return fmt.Errorf("restore %s: %w", f.Path, err)
		}
	}
	return nil
}
