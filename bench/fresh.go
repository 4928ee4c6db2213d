package bench

import (
	"context"
	"io"
	"os"
)

// orDefault sets *v to def when it is not positive: an option left zero.
func orDefault(v *int, def int) {
	if *v <= 0 {
		*v = def
	}
}

// orTempDir is dir, or os.TempDir() when dir is empty.
func orTempDir(dir string) string {
	if dir == "" {
		return os.TempDir()
	}
	return dir
}

// orDiscard is w, or io.Discard when w is nil.
func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// withFreshRelay serves the agentnode relay on a fresh data directory
// under parent (named "agentnode-bench-<name>-…") for the length of fn,
// then closes and removes both.
func withFreshRelay(ctx context.Context, parent, name string, fn func(*server) error) (err error) {
	dir, err := os.MkdirTemp(parent, "agentnode-bench-"+name+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	s, err := serve(ctx, openers[0], dir)
	if err != nil {
		return err
	}
	defer closeServer(s, &err)
	return fn(s)
}
