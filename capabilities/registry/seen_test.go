package registry_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentnode/agentnode/capabilities/registry"
	"github.com/agentnode/agentnode/capabilities/registry/registrytest"
)

// The seen log survives a torn last line (a crash mid-append): what was
// written before is kept, the torn line is skipped, and new lines follow.
func TestSeenLog_tornLine(t *testing.T) {
	rel := registrytest.OpenRelay(t)
	alice, alicePK := registrytest.Key(t)
	bob, _ := registrytest.Key(t)
	path := filepath.Join(t.TempDir(), "seen.jsonl")
	seen, err := registry.OpenSeenLog(path)
	if err != nil {
		t.Fatal(err)
	}
	reg := registry.New(rel, registry.WithSeenLog(seen))
	unhook := rel.OnStored(reg.Index)
	if err := reg.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	registrytest.Publish(t, rel, alice, note("1.0.0"), time.Now().Unix())
	unhook()
	seen.Close()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"a":"` + alicePK[:10]) // torn
	f.Close()

	seen2, err := registry.OpenSeenLog(path)
	if err != nil {
		t.Fatalf("reopen with a torn line: %v", err)
	}
	reg2 := registry.New(rel, registry.WithSeenLog(seen2))
	defer rel.OnStored(reg2.Index)()
	if err := reg2.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	registrytest.Publish(t, rel, bob, note("9.0.0"), time.Now().Add(-time.Hour).Unix()) // seen after alice
	e, err := reg2.Resolve(context.Background(), "note", "")
	if err != nil || e.Author != alicePK {
		t.Fatalf("after a restart over a torn log: %v, %+v; want alice's (seen first)", err, e)
	}
	// Bob's line, written after the torn one, stands on a line of its own.
	seen2.Close()
	b, _ := os.ReadFile(path)
	if lines := strings.Split(strings.TrimSpace(string(b)), "\n"); len(lines) != 3 || !json.Valid([]byte(lines[2])) {
		t.Fatalf("log after the torn line:\n%s", b)
	}
	seen3, err := registry.OpenSeenLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer seen3.Close()
	if e, err := registry.New(rel, registry.WithSeenLog(seen3)).Resolve(context.Background(), "note", ""); err != nil || e.Author != alicePK {
		t.Fatalf("third start: %v; want alice's, bob's line kept", err)
	}
}
