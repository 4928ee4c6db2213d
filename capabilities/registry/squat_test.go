package registry_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentnode/agentnode/capabilities/registry"
	"github.com/agentnode/agentnode/capabilities/registry/registrytest"
)

// A stranger publishing note@8.0.0 back-dated a year used to win the name
// (earliest created_at). Now the author this node saw first wins, across a
// restart (the seen log); a trusted author wins over both; created_at
// plays no part.
func TestRegistry_Resolve_backDatedStrangerNeverWins(t *testing.T) {
	rel := registrytest.OpenRelay(t)
	alice, alicePK := registrytest.Key(t)
	mallory, malloryPK := registrytest.Key(t)
	ctx := context.Background()
	logPath := filepath.Join(t.TempDir(), "registry", "seen.jsonl")
	seen, err := registry.OpenSeenLog(logPath)
	if err != nil {
		t.Fatal(err)
	}
	reg := registry.New(rel, registry.WithSeenLog(seen))
	defer rel.OnStored(reg.Index)()
	if err := reg.Load(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	registrytest.Publish(t, rel, alice, note("1.0.0"), now)
	registrytest.Publish(t, rel, mallory, note("8.0.0"), now-365*24*3600)

	check := func(reg *registry.Registry, trusted []string, wantBy, wantVer string) {
		t.Helper()
		e, err := reg.Resolve(ctx, "did:nuwa:cap:note", "", trusted...)
		if err != nil {
			t.Fatal(err)
		}
		if e.Author != wantBy || e.Version != wantVer {
			t.Fatalf("resolved %s by %s, want %s by %s", e.Version, e.Author, wantVer, wantBy)
		}
	}
	check(reg, nil, alicePK, "1.0.0")
	check(reg, []string{malloryPK}, malloryPK, "8.0.0") // trusted (e.g. the agent's owner) first
	seen.Close()

	// A restart: a new registry over the same store and seen log.
	seen2, err := registry.OpenSeenLog(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer seen2.Close()
	check(registry.New(rel, registry.WithSeenLog(seen2)), nil, alicePK, "1.0.0")
	// Without memory (the CLI), two untrusted authors are ambiguous.
	if _, err := registry.New(rel).Resolve(ctx, "note", ""); !errors.Is(err, registry.ErrAmbiguous) {
		t.Fatalf("no seen log: %v, want ErrAmbiguous", err)
	}
}

// Unsigned files and files signed by someone else than the event's author
// are not indexed: never listed, resolved or installed.
func TestRegistry_unsignedAndForeignSignedAreNotIndexed(t *testing.T) {
	rel := registrytest.OpenRelay(t)
	alice, _ := registrytest.Key(t)
	mallory, _ := registrytest.Key(t)
	unsigned := registrytest.Spec{Name: "memo", Version: "1.0.0", Unsigned: true}
	registrytest.Publish(t, rel, mallory, unsigned, t0)
	foreign, err := registrytest.Event(registrytest.Spec{Name: "todo", Version: "1.0.0", FileSigner: alice}, mallory, t0)
	if err != nil {
		t.Fatal(err)
	}
	// The relay refuses a file whose signature names another pubkey.
	if err := rel.Publish(context.Background(), foreign); err == nil {
		t.Log("the relay stored a foreign-signed package")
	}
	reg := registry.New(rel)
	if err := reg.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	if reg.Len() != 0 {
		t.Fatalf("indexed %d packages, want 0", reg.Len())
	}
	for _, name := range []string{"memo", "todo"} {
		if _, err := reg.Resolve(context.Background(), name, ""); !errors.Is(err, registry.ErrNotFound) {
			t.Errorf("resolve %s: %v, want ErrNotFound", name, err)
		}
	}
}
