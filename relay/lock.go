package relay

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ErrDataDirInUse: another process (or another Relay in this one) has the
// data directory open.
var ErrDataDirInUse = errors.New("data dir in use by another agentnode")

// lockFile is the data directory's lock: it holds the pid of the process
// that has the directory open, and an exclusive flock while it does (the
// kernel drops the lock when the process dies, so a stale file locks
// nothing).
const lockFile = "agentnode.pid"

// dirLock is a held data-directory lock.
type dirLock struct{ f *os.File }

// lockDataDir creates dir if needed and takes its lock, or fails with
// ErrDataDirInUse naming the holder's pid.
func lockDataDir(dir string) (*dirLock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("data dir lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := os.ReadFile(f.Name())
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w (pid %s): %s", ErrDataDirInUse, holder(b), dir)
		}
		return nil, fmt.Errorf("data dir lock: %w", err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &dirLock{f: f}, nil
}

// holder is the pid recorded in the lock file ("unknown" if none).
func holder(b []byte) string {
	pid := strings.TrimSpace(string(b))
	if _, err := strconv.Atoi(pid); err != nil {
		return "unknown"
	}
	return pid
}

// release drops the lock (the file stays: removing it would race with a
// process that just opened it).
func (l *dirLock) release() {
	if l != nil && l.f != nil {
		l.f.Close()
		l.f = nil
	}
}
