package hostile

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"

	"github.com/agentnode/agentnode/internal/testkit"
)

// acked is the set of event ids the node acknowledged (OK true).
type acked struct {
	mu  sync.Mutex
	ids []string
}

func (a *acked) add(id string) { a.mu.Lock(); a.ids = append(a.ids, id); a.mu.Unlock() }

func (a *acked) snapshot() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.ids...)
}

// publishLoad publishes notes over conns connections until ctx ends,
// recording every acknowledged one; it returns a wait for the publishers.
func publishLoad(ctx context.Context, t *testing.T, n *node, conns int, got *acked) (wait func()) {
	t.Helper()
	var wg sync.WaitGroup
	for w := range conns {
		c := n.client(t)
		sk := nostr.GeneratePrivateKey()
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				evt, err := publish(c, sk, 1, nostr.Tags{{"t", "load"}}, fmt.Sprint("load ", w, " ", i), 20*time.Second)
				if err == nil {
					got.add(evt.ID)
				}
			}
		})
	}
	return wg.Wait
}

// storedIDs is every event id n answers for filter (paged by the relay
// client, which keeps up to 50 000).
func storedIDs(t *testing.T, n *node, f nostr.Filter) map[string]bool {
	t.Helper()
	c := n.client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	evts, err := c.Query(ctx, nostr.Filters{f})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, e := range evts {
		ids[e.ID] = true
	}
	return ids
}

func TestBackup_underPublishLoadRestoresEveryAcknowledgedEvent(t *testing.T) {
	n := startNode(t, map[string]any{"events_per_second": 100000, "events_burst": 100000, "max_limit": 50000})
	ctx, stop := context.WithCancel(context.Background())
	var got acked
	wait := publishLoad(ctx, t, n, 4, &got)
	defer func() { stop(); wait() }()
	testkit.WaitFor(t, 60*time.Second, "2000 acknowledged events", func() bool { return len(got.snapshot()) >= 2000 })

	owner, id := stateDoc(t, n, n.data) // an Agent State Model document in state.db (SQLite, WAL)
	before := got.snapshot()            // acknowledged before the backup began
	dir := filepath.Join(t.TempDir(), "backup")
	out, err := runCLI(t, n, "backup", dir, "--data", n.data)
	if err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	during := len(got.snapshot()) - len(before)
	stop()
	wait()
	if during == 0 {
		t.Log("no event was acknowledged while the backup ran (a fast backup): still a valid check of the acknowledged ones")
	}
	assertNotSparse(t, filepath.Join(dir, "events", "data.mdb"))

	restored := filepath.Join(t.TempDir(), "restored")
	if out, err := runCLI(t, n, "restore", dir, "--data", restored); err != nil {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(restored, "agents", "api.token")); strings.TrimSpace(string(b)) != n.token(t) {
		t.Fatalf("the restored API token is %q, want the node's", b)
	}
	out, err = runCLI(t, n, "state", "get", "--owner", owner, "--schema", settingsSchema, "--id", id, "--data", restored, "--json")
	var doc struct{ Object map[string]any }
	if err != nil || json.Unmarshal(out, &doc) != nil || doc.Object["language"] != "es" {
		t.Fatalf("the state document after restore (want language es): %v\n%s", err, out)
	}
	r := launchNode(t, launch{data: restored, config: map[string]any{"relay": map[string]any{"max_limit": 50000}}})
	ids := storedIDs(t, r, nostr.Filter{Kinds: []int{1}, Limit: 50000})
	for _, id := range before {
		if !ids[id] {
			t.Fatalf("event %s was acknowledged before the backup began and is missing after restore (%d of %d restored)", id, len(ids), len(before))
		}
	}
	t.Logf("%d events acknowledged before the backup, %d during it; %d restored", len(before), during, len(ids))
}

// assertNotSparse checks that a file's apparent size is what it holds:
// no 256 GiB map-size surprise for backup tools.
func assertNotSparse(t *testing.T, path string) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	blocks := st.Sys().(*syscall.Stat_t).Blocks * 512
	if st.Size() > 64<<20 || st.Size() > blocks+64<<10 {
		t.Fatalf("%s: apparent size %d bytes, %d allocated: sparse", path, st.Size(), blocks)
	}
}

func TestRestore_refusesATamperedBackupAndAUsedDirectory(t *testing.T) {
	n := startNode(t, nil)
	dir := filepath.Join(t.TempDir(), "backup")
	if out, err := runCLI(t, n, "backup", dir, "--data", n.data); err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	if out, err := runCLI(t, n, "backup", dir, "--data", n.data); err == nil || !strings.Contains(string(out), "target exists and is not empty") {
		t.Fatalf("backup into a used directory: %v\n%s", err, out)
	}
	if out, err := runCLI(t, n, "restore", dir, "--data", n.data); err == nil || !strings.Contains(string(out), "target exists and is not empty") {
		t.Fatalf("restore over a used data directory: %v\n%s", err, out)
	}
	token := filepath.Join(dir, "agents", "api.token")
	os.WriteFile(token, []byte("changed\n"), 0o600)
	target := filepath.Join(t.TempDir(), "restored")
	out, err := runCLI(t, n, "restore", dir, "--data", target)
	if err == nil || !strings.Contains(string(out), "backup does not match its manifest: agents/api.token changed") {
		t.Fatalf("restore of a tampered backup: %v\n%s", err, out)
	}
	if _, err := os.Stat(target); err == nil {
		entries, _ := os.ReadDir(target)
		if len(entries) > 0 {
			t.Fatalf("a refused restore wrote %d entries into %s", len(entries), target)
		}
	}
}

func TestCompact_refusesARunningNodeAndKeepsEveryEvent(t *testing.T) {
	n := startNode(t, nil)
	c := n.client(t)
	sk := nostr.GeneratePrivateKey()
	var want []string
	for i := range 200 {
		evt, err := publish(c, sk, 1, nil, strings.Repeat("x", 2000)+fmt.Sprint(i), 20*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, evt.ID)
	}
	for _, id := range want[:100] { // free pages for compaction to drop
		del := &nostr.Event{Kind: 5, Tags: nostr.Tags{{"e", id}}, CreatedAt: nostr.Now()}
		del.Sign(sk)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		if err := c.Publish(ctx, del); err != nil {
			t.Fatal(err)
		}
		cancel()
	}
	if out, err := runCLI(t, n, "compact", "--data", n.data); err == nil || !strings.Contains(string(out), "data dir in use") || !strings.Contains(string(out), "stop serve first") {
		t.Fatalf("compact of a running node's store: %v\n%s", err, out)
	}
	if _, err := n.terminate(t, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, n, "compact", "--data", n.data)
	if err != nil || !strings.Contains(string(out), "compacted") {
		t.Fatalf("compact: %v\n%s", err, out)
	}
	r := launchNode(t, launch{data: n.data, config: map[string]any{}})
	ids := storedIDs(t, r, nostr.Filter{Kinds: []int{1}, Limit: 1000})
	if len(ids) != 100 {
		t.Fatalf("after compact the node stores %d notes, want 100", len(ids))
	}
	for _, id := range want[100:] {
		if !ids[id] {
			t.Fatalf("note %s lost by compact", id)
		}
	}
}

const settingsSchema = "did:nuwa:core:AgentSettings#v1"

// stateDoc stores the owner's settings (a core model, id = the owner's
// hex key) in data's state.db with the CLI, beside the running node; it
// returns the owner's npub and hex key.
func stateDoc(t *testing.T, n *node, data string) (string, string) {
	t.Helper()
	pk, _ := nostr.GetPublicKey(nostr.GeneratePrivateKey())
	owner, _ := nip19.EncodePublicKey(pk)
	out, err := runCLI(t, n, "state", "put", "--owner", owner, "--schema", settingsSchema, "--id", pk,
		"--object", `{"language":"es"}`, "--data", data)
	if err != nil {
		t.Fatalf("state put: %v\n%s", err, out)
	}
	return owner, pk
}
