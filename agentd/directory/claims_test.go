package directory_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/internal/testkit"
)

// A registration in the protocol's own form (free-form id, auth object, no
// proof) is listed, marked unverified with the reason, found by its id,
// ranked below every proven agent however good it looks, and kept available
// by its heartbeats.
func TestDirectory_RegisterClaim(t *testing.T) {
	env := newEnv(t)
	d := startDir(t, env.rel, env.clk, directory.Config{})
	proven := testkit.NewKey(t)
	if _, err := d.Register(context.Background(), proof(t, proven, "busy", env.clk.Now(), card(proven.PK))); err != nil {
		t.Fatal(err)
	}
	got, err := d.RegisterClaim(t.Context(), directory.Claim{ID: "unique-agent-id", Name: "Agent Name", Tools: []string{"visualization"},
		Specializations: []string{"nlp"}, Auth: []string{"token", "signature"}})
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != "unique-agent-id" || got.Npub != "" || !got.Registered || !got.Available || got.Name != "Agent Name" ||
		!strings.Contains(got.Unverified, "auth: ") || !strings.Contains(got.Unverified, "without a signed kind 30333 proof") {
		t.Errorf("claim = %+v", got)
	}
	if a, ok := d.Get("unique-agent-id"); !ok || a.Unverified == "" {
		t.Errorf("Get by the free-form id: %+v %v", a, ok)
	}
	// The proven agent is busy (rank 0 on load), the claim idle: proven still first.
	hits := d.Search(directory.Query{Capabilities: []string{"visualization"}})
	if !slices.Equal(ids(hits), []string{proven.PK, "unique-agent-id"}) {
		t.Errorf("ranking = %v, want the proven agent first", ids(hits))
	}
	if p, _ := d.Get(proven.PK); p.Unverified != "" {
		t.Errorf("a proven agent is marked: %q", p.Unverified)
	}

	env.clk.Advance(2 * time.Minute) // past the heartbeat TTL
	if a, _ := d.Get("unique-agent-id"); a.Available {
		t.Error("available without heartbeats")
	}
	if a, err := d.HeartbeatClaim(t.Context(), "unique-agent-id", "active"); err != nil || !a.Available {
		t.Errorf("heartbeat: %+v %v", a, err)
	}
	if _, err := d.HeartbeatClaim(t.Context(), "someone-else", "active"); !errors.Is(err, directory.ErrUnknownAgent) {
		t.Errorf("heartbeat of no claim: %v", err)
	}
}

func TestDirectory_RegisterClaimRefusals(t *testing.T) {
	env := newEnv(t)
	d := startDir(t, env.rel, env.clk, directory.Config{})
	proven := testkit.NewKey(t)
	if _, err := d.Register(context.Background(), proof(t, proven, "active", env.clk.Now(), nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := d.RegisterClaim(t.Context(), directory.Claim{ID: proven.PK}); !errors.Is(err, directory.ErrProvenAgent) {
		t.Errorf("a claim on a proven agent's key: %v", err)
	}
	if _, err := d.RegisterClaim(t.Context(), directory.Claim{ID: " "}); !errors.Is(err, directory.ErrBadClaim) {
		t.Errorf("no id: %v", err)
	}
	if _, err := d.RegisterClaim(t.Context(), directory.Claim{ID: strings.Repeat("x", directory.MaxClaimIDLen+1)}); !errors.Is(err, directory.ErrBadClaim) {
		t.Errorf("long id: %v", err)
	}
	// A claim on a key, then the key's signed proof: the proof replaces it.
	later := testkit.NewKey(t)
	if a, err := d.RegisterClaim(t.Context(), directory.Claim{ID: later.PK, Auth: []string{"token"}}); err != nil || a.Npub == "" {
		t.Fatalf("claim on a key: %+v %v", a, err)
	}
	if _, err := d.Register(context.Background(), proof(t, later, "active", env.clk.Now(), nil)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, a := range d.All() {
		if a.ID == later.PK {
			n++
			if a.Unverified != "" {
				t.Errorf("still unverified after the proof: %+v", a)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d entries for the key, want 1", n)
	}
}
