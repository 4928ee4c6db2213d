package consent_test

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/consent"
)

// An Open cut short by its context (a stop while the node starts) leaves
// no file open: whatever it returns, the database can be closed. The
// context ends at random moments of Open; after each, no descriptor of
// this process points at the database.
func TestOpen_cancelledLeavesNoFileOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "consent.db")
	start := time.Now()
	c, err := consent.Open(context.Background(), consent.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	window := 2 * time.Since(start) // an Open of the existing file takes less
	c.Close()
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Duration(rnd.Int64N(int64(window))), cancel)
		if c, err := consent.Open(ctx, consent.Config{Path: path}); err == nil {
			c.Close()
		}
		cancel()
		if open := openFiles(t, path); len(open) > 0 {
			t.Fatalf("open %d: after an Open cut short and Close, still open: %q", i, open)
		}
	}
}

// openFiles lists this process's descriptors on path or its -wal/-shm
// (Linux /proc; elsewhere the test is skipped).
func openFiles(t *testing.T, path string) []string {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	var open []string
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err == nil && strings.HasPrefix(target, path) {
			open = append(open, target)
		}
	}
	return open
}
