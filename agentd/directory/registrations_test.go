package directory_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/agentd/directory/registrationstest"
	"github.com/agentnode/agentnode/internal/testkit"
)

func TestMemoryRegistrations_conformance(t *testing.T) {
	registrationstest.Run(t, func(t *testing.T) registrationstest.Open {
		m := directory.NewMemoryRegistrations()
		return func() directory.Registrations { return m }
	})
}

// TestDirectory_restoresRegistrations: a second directory (a restart, or
// another instance) over the same events and Registrations lists the proven
// registration as registered and the claim with its last heartbeat.
func TestDirectory_restoresRegistrations(t *testing.T) {
	env := newEnv(t)
	regs := directory.NewMemoryRegistrations()
	a := startDir(t, env.rel, env.clk, directory.Config{Registrations: regs})
	k := testkit.NewKey(t)
	ctx := context.Background()
	if _, err := a.Register(ctx, proof(t, k, "active", env.clk.Now().Add(-30*time.Second), card(k.PK))); err != nil {
		t.Fatal(err)
	}
	if _, err := a.RegisterClaim(t.Context(), directory.Claim{ID: "free-form", Name: "Free", Tools: []string{"viz"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.HeartbeatClaim(t.Context(), "free-form", "busy"); err != nil {
		t.Fatal(err)
	}

	b := startDir(t, env.rel, env.clk, directory.Config{Registrations: regs})
	if got, ok := b.Get(k.PK); !ok || !got.Registered {
		t.Errorf("proven registration on b: %+v (found %v), want registered", got, ok)
	}
	got, ok := b.Get("free-form")
	if !ok || !got.Registered || got.Status != "busy" || got.Name != "Free" {
		t.Errorf("claim on b: %+v (found %v), want registered, busy, Free", got, ok)
	}
	want, _ := a.Get("free-form")
	if got.Status != want.Status || got.Available != want.Available {
		t.Errorf("claim on b %+v differs from a's %+v", got, want)
	}

	// Changes through a reach b when it reloads: an unregistration, and a
	// claim replaced by a proven registration of the same key.
	env.clk.Advance(time.Second)
	if err := a.Unregister(ctx, k.PK, proof(t, k, "offline", env.clk.Now(), nil)); err != nil {
		t.Fatal(err)
	}
	k2 := testkit.NewKey(t)
	if _, err := a.RegisterClaim(t.Context(), directory.Claim{ID: k2.PK, Name: "Claimed"}); err != nil {
		t.Fatal(err)
	}
	if err := b.ReloadRegistrations(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.Get(k.PK); got.Registered {
		t.Errorf("b still lists %s as registered after a unregistered it", k.PK)
	}
	if got, ok := b.Get(k2.PK); !ok || got.Unverified == "" {
		t.Errorf("b lacks the claim of %s: %+v", k2.PK, got)
	}
	if _, err := a.Register(ctx, proof(t, k2, "active", env.clk.Now(), card(k2.PK))); err != nil {
		t.Fatal(err)
	}
	if err := b.ReloadRegistrations(ctx); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; { // b ingests k2's heartbeat in the background
		got, ok := b.Get(k2.PK)
		if ok && got.Registered && got.Unverified == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("b after k2's proven registration: %+v (found %v), want registered and verified", got, ok)
		}
		time.Sleep(5 * time.Millisecond) // polling interval, not synchronisation
	}
}
