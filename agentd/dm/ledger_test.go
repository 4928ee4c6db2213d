package dm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// A crash in the middle of an append leaves a torn last line: it is cut
// at the next open, and the records appended after that open are read
// at the one after.
func TestLedger_tornTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dm", "state.json")
	id := func(c string) string { return strings.Repeat(c, 64) }
	now := time.Now()
	l, err := openLedger(path, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Mark(t.Context(), id("a"), nostr.Timestamp(now.Unix()), now); err != nil {
		t.Fatal(err)
	}
	l.close()
	if l, err = openLedger(path, time.Hour); err != nil { // folds a into the snapshot: the log is empty
		t.Fatal(err)
	}
	l.close()
	f, err := os.OpenFile(logPath(path), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"op":"done","id":"` + id("c")[:10])
	f.Close()
	if l, err = openLedger(path, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := l.Mark(t.Context(), id("b"), nostr.Timestamp(now.Unix()), now); err != nil {
		t.Fatal(err)
	}
	l.close()
	if l, err = openLedger(path, time.Hour); err != nil {
		t.Fatal(err)
	}
	if !l.Has(id("a")) || !l.Has(id("b")) || l.Has(id("c")) {
		t.Fatalf("after a torn tail: a %v, b %v, c (torn) %v", l.Has(id("a")), l.Has(id("b")), l.Has(id("c")))
	}
}

// A step appends one line; it never rewrites the snapshot until the log
// is due for compaction.
func TestLedger_appendsOneLinePerStep(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dm", "state.json")
	l, err := openLedger(path, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	for i := range 100 {
		if err := l.Mark(t.Context(), strings.Repeat("0", 62)+string(rune('a'+i%26))+string(rune('a'+i/26)), 1, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("the snapshot was written for 100 steps")
	}
	b, _ := os.ReadFile(logPath(path))
	if got := strings.Count(string(b), "\n"); got != 100 {
		t.Errorf("%d log lines for 100 steps", got)
	}
}
