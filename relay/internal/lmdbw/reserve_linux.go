package lmdbw

import (
	"errors"
	"os"
	"syscall"
)

// reserveFile allocates the blocks of path's first size bytes (creating
// the file, growing it to size if it is shorter), so that later writes
// through a shared map of that range never need a new block. Filesystems
// without fallocate are left as they are.
func reserveFile(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > size {
		size = st.Size()
	}
	err = syscall.Fallocate(int(f.Fd()), 0, 0, size)
	if errors.Is(err, syscall.EOPNOTSUPP) {
		return nil
	}
	return err
}
