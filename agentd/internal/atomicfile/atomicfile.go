// Package atomicfile writes files so that a crash leaves either the old
// file or the whole new one, never a torn write.
//
//	err := atomicfile.Write("/data/agents/agents.json", b, 0o600)
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write writes data to path with mode perm through a temporary file in the
// same directory: write, fsync, rename over path, fsync the directory.
func Write(path string, data []byte, perm os.FileMode) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(f.Name())
		}
	}()
	if err := writeSync(f, data, perm); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	return SyncDir(dir)
}

func writeSync(f *os.File, data []byte, perm os.FileMode) error {
	if err := f.Chmod(perm); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Sync()
}

// SyncDir fsyncs a directory so that a rename or removal in it is durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
