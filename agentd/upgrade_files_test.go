package agentd_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/blossom"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
)

// filesNode is a node whose installs fetch files from a real Blossom
// store on disk (the node's own blobs: DefFiles.Local).
type filesNode struct {
	*node
	store  *blossom.Store
	author key
}

func newFilesNode(t *testing.T) *filesNode {
	store, err := blossom.OpenStore(t.TempDir(), blossom.Quota{})
	if err != nil {
		t.Fatal(err)
	}
	local := func(sha string) (io.ReadCloser, error) {
		f, _, err := store.Open(sha)
		return f, err
	}
	return &filesNode{node: openNode(t, agentd.Config{DefFiles: agentd.DefFiles{Local: local}}), store: store, author: testkit.NewKey(t)}
}

// file publishes the 1063 of a file; stored false leaves its blob out of
// the store (a file no source has).
func (n *filesNode) file(name string, content []byte, stored bool) events.EventRef {
	n.t.Helper()
	sum := sha256.Sum256(content)
	sha := hex.EncodeToString(sum[:])
	if stored {
		if _, err := n.store.Put(context.Background(), n.author.PK, bytes.NewReader(content), 1<<20, "text/plain", nil); err != nil {
			n.t.Fatal(err)
		}
	}
	m := events.FileMetadata{URL: "https://blossom.example/" + sha, SHA256: sha, Size: int64(len(content)), Type: "text/plain", Name: name}
	return events.EventRef{ID: n.publish(n.author.SK, m.Template()).ID, Marker: events.MarkerFile}
}

// version publishes a version of the reviewer with files.
func (n *filesNode) version(v string, files ...events.EventRef) *events.Definition {
	def := reviewer()
	def.Version, def.Files = v, files
	return n.definition(n.author, def)
}

// homeFiles are the agent's files on disk (name -> content) and its manifest's names.
func (n *filesNode) homeFiles(agent string) (map[string]string, []string) {
	n.t.Helper()
	got := map[string]string{}
	entries, _ := os.ReadDir(n.d.FilesDir(agent))
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(n.d.FilesDir(agent), e.Name()))
		if err != nil {
			n.t.Fatal(err)
		}
		got[e.Name()] = string(b)
	}
	manifest, err := n.d.Files(agent)
	if err != nil {
		n.t.Fatal(err)
	}
	var names []string
	for _, f := range manifest {
		names = append(names, f.Name)
	}
	slices.Sort(names)
	return got, names
}

func TestDaemon_Upgrade_replacesFiles(t *testing.T) {
	n := newFilesNode(t)
	ctx := context.Background()
	a, b := n.file("a.txt", []byte("alpha"), true), n.file("b.txt", []byte("bravo"), true)
	v1 := n.version("1", a, b)
	agent := n.install(agentd.InstallRequest{Definition: v1.ID, Owner: testkit.NewKey(t).PK}).Agent
	if got, names := n.homeFiles(agent.PubKey); len(got) != 2 || !slices.Equal(names, []string{"a.txt", "b.txt"}) {
		t.Fatalf("installed files %v, manifest %v", got, names)
	}

	// v2 keeps a, drops b, adds c, whose blob no source has: the upgrade
	// fails whole and the agent keeps v1 and its files.
	lost := n.file("c.txt", []byte("charlie"), false)
	v2bad := n.version("2", a, lost)
	if _, err := n.d.Upgrade(ctx, agent.PubKey, v2bad.ID); !errors.Is(err, agentd.ErrFileUnavailable) {
		t.Fatalf("upgrade to a version with an unavailable file: %v, want ErrFileUnavailable", err)
	}
	if cur, _ := n.d.Lookup(agent.PubKey); cur.DefinitionID != v1.ID {
		t.Fatalf("after a failed upgrade the agent runs %s, want v1 %s", cur.DefinitionID, v1.ID)
	}
	if got, names := n.homeFiles(agent.PubKey); got["a.txt"] != "alpha" || got["b.txt"] != "bravo" || len(got) != 2 || !slices.Equal(names, []string{"a.txt", "b.txt"}) {
		t.Fatalf("after a failed upgrade: files %v, manifest %v; want v1's", got, names)
	}
	if left, _ := os.ReadDir(filepath.Join(n.dir, "agents", ".staging")); len(left) != 0 {
		t.Fatalf("a failed upgrade left %d staging directories", len(left))
	}

	c := n.file("c.txt", []byte("charlie"), true)
	v3 := n.version("3", a, c)
	plan, err := n.d.PlanUpgrade(ctx, agent.PubKey, v3.ID)
	if err != nil || !slices.Equal(plan.FilesAdded, []string{"c.txt"}) || !slices.Equal(plan.FilesRemoved, []string{"b.txt"}) {
		t.Fatalf("plan: added %v removed %v, %v; want c.txt added, b.txt removed", plan.FilesAdded, plan.FilesRemoved, err)
	}
	if plan, err = n.d.Upgrade(ctx, agent.PubKey, v3.ID); err != nil || !plan.Applied {
		t.Fatalf("upgrade: %+v, %v", plan, err)
	}
	got, names := n.homeFiles(agent.PubKey)
	if want := map[string]string{"a.txt": "alpha", "c.txt": "charlie"}; len(got) != 2 || got["a.txt"] != want["a.txt"] || got["c.txt"] != want["c.txt"] {
		t.Fatalf("after the upgrade: files %v, want %v (b.txt removed)", got, want)
	}
	if !slices.Equal(names, []string{"a.txt", "c.txt"}) {
		t.Fatalf("manifest after the upgrade: %v", names)
	}
	if left, _ := filepath.Glob(filepath.Join(n.dir, "agents", agent.PubKey, "files.old-*")); len(left) != 0 {
		t.Fatalf("the replaced files stay aside: %v", left)
	}

	// A version without files removes them all.
	v4 := n.version("4")
	if _, err := n.d.Upgrade(ctx, agent.PubKey, v4.ID); err != nil {
		t.Fatal(err)
	}
	if got, names := n.homeFiles(agent.PubKey); len(got) != 0 || len(names) != 0 {
		t.Fatalf("after an upgrade to a version without files: %v, manifest %v", got, names)
	}
}

// TestDaemon_Upgrade_sameFileUnderANewMetadataEvent: a new version that
// references an unchanged file through another kind-1063 (a publisher
// signs one per publish: another second, another server) neither adds nor
// removes it; only the files that really changed are named.
func TestDaemon_Upgrade_sameFileUnderANewMetadataEvent(t *testing.T) {
	n := newFilesNode(t)
	ctx := context.Background()
	a, b := n.file("a.txt", []byte("alpha"), true), n.file("b.txt", []byte("bravo"), true)
	agent := n.install(agentd.InstallRequest{Definition: n.version("1", a, b).ID, Owner: testkit.NewKey(t).PK}).Agent

	sum := sha256.Sum256([]byte("alpha"))
	sha := hex.EncodeToString(sum[:])
	again := events.FileMetadata{URL: "https://other-blossom.example/" + sha, SHA256: sha, Size: 5, Type: "text/plain", Name: "a.txt"}
	a2 := events.EventRef{ID: n.publish(n.author.SK, again.Template()).ID, Marker: events.MarkerFile}
	if a2.ID == a.ID {
		t.Fatal("the second 1063 of a.txt has the first one's id")
	}
	c := n.file("c.txt", []byte("charlie"), true)
	plan, err := n.d.PlanUpgrade(ctx, agent.PubKey, n.version("2", a2, c).ID)
	if err != nil || !slices.Equal(plan.FilesAdded, []string{"c.txt"}) || !slices.Equal(plan.FilesRemoved, []string{"b.txt"}) {
		t.Fatalf("plan: added %v removed %v, %v; want c.txt added, b.txt removed (a.txt unchanged)", plan.FilesAdded, plan.FilesRemoved, err)
	}
	v3 := n.version("3", a2, b)
	if plan, err = n.d.Upgrade(ctx, agent.PubKey, v3.ID); err != nil || !plan.Applied || len(plan.FilesAdded)+len(plan.FilesRemoved) != 0 {
		t.Fatalf("upgrade to the same files under new 1063s: %+v, %v; want applied, no file changes", plan, err)
	}
	if got, names := n.homeFiles(agent.PubKey); got["a.txt"] != "alpha" || got["b.txt"] != "bravo" || len(got) != 2 || !slices.Equal(names, []string{"a.txt", "b.txt"}) {
		t.Fatalf("after the upgrade: files %v, manifest %v", got, names)
	}
}
