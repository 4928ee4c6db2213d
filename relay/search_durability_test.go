package relay

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// The search index does not fsync its segments while it runs: after a
// crash they may be torn. An index left without the clean-shutdown marker
// is discarded and rebuilt from LMDB, whatever its files hold.
func TestRelay_TornSearchIndexIsRebuilt(t *testing.T) {
	dir := t.TempDir()
	tr := openTestRelay(t, dir, Limits{})
	sk := nostr.GeneratePrivateKey()
	ctx := context.Background()
	for i := range 12 {
		e := signed(t, sk, 4129, nostr.Tags{{"title", fmt.Sprintf("l%d", i)}, {"e", hexID(1)}}, "heron notes")
		if err := tr.Publish(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tr.QuerySync(ctx, nostr.Filter{Search: "heron", Limit: 1}); err != nil { // commits the index
		t.Fatal(err)
	}
	tr.close()
	index := filepath.Join(dir, "search")
	if _, err := os.Stat(filepath.Join(index, cleanMarker)); err != nil {
		t.Fatalf("a clean close left no marker: %v", err)
	}
	// A crash: no marker, and every file of the index torn.
	if err := os.Remove(filepath.Join(index, cleanMarker)); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(index)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Type().IsRegular() {
			if err := os.WriteFile(filepath.Join(index, e.Name()), []byte("torn"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	tr2 := openTestRelay(t, dir, Limits{})
	found, err := tr2.QuerySync(ctx, nostr.Filter{Search: "heron", Limit: 100})
	if err != nil || len(found) != 12 {
		t.Fatalf("after the rebuild: %d of 12 (%v)", len(found), err)
	}
}
