package relay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/relay/internal/lmdbw"
)

// diskFullRefusal is the start of the OK false message for a full disk.
const diskFullRefusal = "error: disk full"

// TestDiskFull_RefusesThenRecovers runs the relay on a filesystem of a
// few MiB, fills it, and checks that a publish that cannot be made durable
// is answered OK false "error: disk full ..." while the relay keeps
// serving reads (queries and search) and does not spin; that a new relay
// cannot be created there (an error, not a crash); that a restart on
// the still-full disk opens, survives its first write and refuses it the
// same way; that writes resume by themselves once space is freed; and
// that after a restart every event that got OK true is stored and
// searchable.
func TestDiskFull_RefusesThenRecovers(t *testing.T) {
	fs := smallFS(t, 8<<20)
	data, filler := filepath.Join(fs, "data"), filepath.Join(fs, "filler")
	sk := nostr.GeneratePrivateKey()
	pk, _ := nostr.GetPublicKey(sk)
	word := fmt.Sprintf("diskfullword%d", time.Now().UnixNano())
	var acked []string
	publish := func(c *nostr.Relay, i int) error {
		evt := lesson(t, sk, word, i)
		err := publishWS(t, c, evt)
		if err == nil {
			acked = append(acked, evt.ID)
		}
		return err
	}

	tr := openTestRelay(t, data, Limits{})
	c := tr.connect(t)
	for i := range 5 {
		if err := publish(c, i); err != nil {
			t.Fatalf("publish before the disk is full: %v", err)
		}
	}
	fill(t, filler)
	refused := publishUntilRefused(t, func(i int) error { return publish(c, 100+i) })
	t.Logf("disk full after %d events acknowledged: %v", len(acked), refused)
	checkServed(t, tr, c, pk, word, acked)
	checkIdle(t)
	checkFreshRefused(t, filepath.Join(fs, "fresh"))

	tr.close()
	tr = openTestRelay(t, data, Limits{})
	c = tr.connect(t)
	publishUntilRefused(t, func(i int) error { return publish(c, 1000+i) })
	checkServed(t, tr, c, pk, word, acked)

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := publish(c, 2000+i); err != nil {
			t.Fatalf("publish after space was freed: %v", err)
		}
	}

	tr.close()
	tr = openTestRelay(t, data, Limits{})
	checkServed(t, tr, tr.connect(t), pk, word, acked)
}

// checkIdle checks that the relay, idle on a full disk, does not spin
// (bluge retried a failed persist in a tight loop: a whole core).
func checkIdle(t *testing.T) {
	t.Helper()
	var before, after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	time.Sleep(time.Second) // the window measured, not a synchronisation
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
	if cpu > 250*time.Millisecond {
		t.Fatalf("idle on a full disk, the process used %v of CPU in 1 s", cpu)
	}
}

// checkFreshRefused checks that a relay cannot be created on the full
// disk, and says so with an error instead of a crash.
func checkFreshRefused(t *testing.T, dir string) {
	t.Helper()
	r, err := Open(context.Background(), Config{DataDir: dir})
	if err == nil {
		r.Close(context.Background())
		t.Fatal("a new relay opened on a full disk")
	}
	if !errors.Is(err, syscall.ENOSPC) && !errors.Is(err, lmdbw.ErrDiskFull) {
		t.Fatalf("opening a new relay on a full disk: %v, want a disk-full error", err)
	}
}

// lesson is a valid kind 4129 event (indexed for search) whose content,
// a few KiB, carries word.
func lesson(t *testing.T, sk, word string, i int) *nostr.Event {
	body := strings.Repeat(fmt.Sprintf("lesson %d teaches %s. ", i, word), 200)
	return signed(t, sk, 4129, nostr.Tags{{"title", fmt.Sprintf("lesson %d", i)}, {"e", hexID(byte(i))}}, body)
}

// publishUntilRefused publishes until one publish is refused and returns
// that refusal, which must be the disk-full one.
func publishUntilRefused(t *testing.T, publish func(i int) error) error {
	t.Helper()
	for i := range 500 {
		if err := publish(i); err != nil {
			if !strings.Contains(err.Error(), diskFullRefusal) {
				t.Fatalf("refusal on a full disk: got %q, want it to contain %q", err, diskFullRefusal)
			}
			return err
		}
	}
	t.Fatal("500 events were acknowledged on a full disk")
	return nil
}

// checkServed checks that every acknowledged event is served by a query
// and by a search.
func checkServed(t *testing.T, tr *testRelay, c *nostr.Relay, pk, word string, acked []string) {
	t.Helper()
	got := ids(queryWS(t, c, nostr.Filter{Authors: []string{pk}, Limit: 1000}))
	if missing := without(acked, got); len(missing) > 0 {
		t.Fatalf("query: %d acknowledged events missing of %d: %v", len(missing), len(acked), missing)
	}
	found, err := tr.QuerySync(context.Background(), nostr.Filter{Search: word, Limit: 1000})
	if err != nil {
		t.Fatalf("search: %v", err)
	}
	if missing := without(acked, ids(found)); len(missing) > 0 {
		t.Fatalf("search: %d acknowledged events missing of %d", len(missing), len(acked))
	}
}

// without returns the elements of want that are not in got.
func without(want, got []string) []string {
	var out []string
	for _, id := range want {
		if !slices.Contains(got, id) {
			out = append(out, id)
		}
	}
	return out
}

// fill writes path until the filesystem has no room for a single byte.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for size := len(chunk); size > 0; {
		_, err := f.Write(chunk[:size])
		switch {
		case errors.Is(err, syscall.ENOSPC):
			size /= 2
		case err != nil:
			t.Fatalf("filling the filesystem: %v", err)
		}
	}
	f.Sync()
}

// smallFS mounts a filesystem of size bytes on a new directory, unmounted
// when the test ends: tmpfs, else an ext4 image on a loop device. The test
// is skipped, with the reason, when neither can be mounted (mounting
// needs root or CAP_SYS_ADMIN).
func smallFS(t *testing.T, size int64) string {
	t.Helper()
	dir := t.TempDir()
	tmpfsErr := run("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir)
	if tmpfsErr != nil {
		if loopErr := mountLoop(t, dir, size); loopErr != nil {
			t.Skipf("no small filesystem for the disk-full test: tmpfs: %v; loop ext4: %v", tmpfsErr, loopErr)
		}
	}
	t.Cleanup(func() {
		if err := run("umount", dir); err != nil {
			t.Errorf("umount %s: %v", dir, err)
			run("umount", "-l", dir)
		}
	})
	return dir
}

// mountLoop mounts an ext4 image of size bytes on dir.
func mountLoop(t *testing.T, dir string, size int64) error {
	img := filepath.Join(t.TempDir(), "fs.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		return err
	}
	if err := os.Truncate(img, size); err != nil {
		return err
	}
	if err := run("mkfs.ext4", "-q", "-F", img); err != nil {
		return err
	}
	return run("mount", "-o", "loop", img, dir)
}

// run runs a command, its output into the error.
func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// TestFailedResult pins the answers to a batch the writer could not commit.
func TestFailedResult(t *testing.T) {
	evt := &nostr.Event{ID: hexID(1)}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("lmdbw: commit batch of 3: %w: mdb_txn_commit: no space left on device", lmdbw.ErrDiskFull), "error: disk full, event not stored"},
		{fmt.Errorf("lmdbw: commit batch of 3: %w: mdb_put: MDB_MAP_FULL", lmdbw.ErrMapFull), "error: store full, event not stored"},
		{errors.New("lmdbw: commit batch of 3: mdb_txn_commit: input/output error"), "error: event not stored"},
	} {
		if got := failedResult(tc.err, evt, slog.New(slog.DiscardHandler)); got == nil || got.Error() != tc.want {
			t.Errorf("failedResult(%v) = %v, want %q", tc.err, got, tc.want)
		}
	}
}
