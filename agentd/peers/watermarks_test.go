package peers_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/peers"
)

// Every Watermarks implementation passes the same suite.
func TestWatermarks(t *testing.T) {
	backends := map[string]func(t *testing.T) peers.Watermarks{
		"mem": func(*testing.T) peers.Watermarks { return peers.NewMemWatermarks() },
		"file": func(t *testing.T) peers.Watermarks {
			w, err := peers.OpenFileWatermarks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return w
		},
	}
	for name, open := range backends {
		t.Run(name, func(t *testing.T) { watermarksConformance(t, open) })
	}
}

func watermarksConformance(t *testing.T, open func(t *testing.T) peers.Watermarks) {
	ctx := context.Background()
	t.Run("unknown peer has no marks", func(t *testing.T) {
		m, err := open(t).Load(ctx, "ws://nobody")
		if err != nil || len(m.Pull) != 0 || len(m.Push) != 0 {
			t.Errorf("Load = %+v, %v", m, err)
		}
	})
	t.Run("save then load", func(t *testing.T) {
		w := open(t)
		want := peers.Marks{Pull: map[string]nostr.Timestamp{"k1": 10, "k2": 20}, Push: map[string]nostr.Timestamp{"k3": 30}}
		if err := w.Save(ctx, "ws://a", want); err != nil {
			t.Fatal(err)
		}
		got, err := w.Load(ctx, "ws://a")
		if err != nil || got.Pull["k1"] != 10 || got.Pull["k2"] != 20 || got.Push["k3"] != 30 {
			t.Errorf("Load = %+v, %v", got, err)
		}
		if other, _ := w.Load(ctx, "ws://b"); len(other.Pull) != 0 {
			t.Errorf("another peer sees %+v", other)
		}
	})
	t.Run("returned and saved maps are copies", func(t *testing.T) {
		w := open(t)
		m := peers.Marks{Pull: map[string]nostr.Timestamp{"k": 1}}
		w.Save(ctx, "ws://a", m)
		m.Pull["k"] = 99
		got, _ := w.Load(ctx, "ws://a")
		got.Pull["k"] = 42
		again, _ := w.Load(ctx, "ws://a")
		if again.Pull["k"] != 1 {
			t.Errorf("stored mark changed to %d through an alias", again.Pull["k"])
		}
	})
	t.Run("save replaces", func(t *testing.T) {
		w := open(t)
		w.Save(ctx, "ws://a", peers.Marks{Pull: map[string]nostr.Timestamp{"old": 1}})
		w.Save(ctx, "ws://a", peers.Marks{Pull: map[string]nostr.Timestamp{"new": 2}})
		got, _ := w.Load(ctx, "ws://a")
		if _, ok := got.Pull["old"]; ok || got.Pull["new"] != 2 {
			t.Errorf("Load = %+v", got)
		}
	})
	t.Run("concurrent saves", func(t *testing.T) {
		w := open(t)
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				peer := "ws://p" + string(rune('a'+i))
				for j := range 20 {
					if err := w.Save(ctx, peer, peers.Marks{Push: map[string]nostr.Timestamp{"k": nostr.Timestamp(j)}}); err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
		for i := range 8 {
			if got, _ := w.Load(ctx, "ws://p"+string(rune('a'+i))); got.Push["k"] != 19 {
				t.Errorf("peer %d: %+v", i, got)
			}
		}
	})
}

func TestFileWatermarks_SurvivesReopen(t *testing.T) {
	dir, ctx := t.TempDir(), context.Background()
	w, err := peers.OpenFileWatermarks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if w.Path() != filepath.Join(dir, "peers.json") {
		t.Errorf("Path = %s", w.Path())
	}
	w.Save(ctx, "wss://peer.example", peers.Marks{Pull: map[string]nostr.Timestamp{"k": 1700000000}})
	again, err := peers.OpenFileWatermarks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := again.Load(ctx, "wss://peer.example"); got.Pull["k"] != 1700000000 {
		t.Errorf("after reopen: %+v", got)
	}
	st, err := os.Stat(w.Path())
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, %v: want 0600", st.Mode(), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the directory holds %d entries, want peers.json only", len(entries))
	}
}

func TestFileWatermarks_RefusesCorruptFile(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "peers.json"), []byte("{not json"), 0o600)
	if _, err := peers.OpenFileWatermarks(dir); err == nil {
		t.Error("a corrupt peers.json was accepted")
	}
}

func TestFileWatermarks_SaveFailureKeepsOldMarks(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores directory permissions")
	}
	dir, ctx := t.TempDir(), context.Background()
	w, _ := peers.OpenFileWatermarks(dir)
	w.Save(ctx, "ws://a", peers.Marks{Pull: map[string]nostr.Timestamp{"k": 1}})
	os.Chmod(dir, 0o500)
	defer os.Chmod(dir, 0o700)
	if err := w.Save(ctx, "ws://a", peers.Marks{Pull: map[string]nostr.Timestamp{"k": 2}}); err == nil {
		t.Fatal("Save into a read-only directory succeeded")
	}
	if got, _ := w.Load(ctx, "ws://a"); got.Pull["k"] != 1 {
		t.Errorf("after a failed save: %+v, want the old mark", got)
	}
}
