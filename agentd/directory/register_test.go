package directory_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/nbd-wtf/go-nostr"
)

// card is an ACP agent object.
func card(id string) *events.AgentCard {
	return &events.AgentCard{ID: id, Name: "DataViz Pro",
		Capabilities: &events.CardCapabilities{Tools: []string{"visualization"}, Models: []string{"modelA"},
			Specializations: []string{"data-analysis"}, Protocols: []string{"ACP-0.1"}},
		CostMetrics: &events.CostMetrics{CostPerToken: 0.0008}}
}

// proof builds a registration (or unregistration) signed by k at at.
func proof(t *testing.T, k key, status string, at time.Time, c *events.AgentCard) *nostr.Event {
	t.Helper()
	evt, err := directory.BuildHeartbeat(k.SK, directory.Status{Status: status, Capacity: 2, Card: c}, at, 0)
	if err != nil {
		t.Fatal(err)
	}
	return evt
}

// resign signs evt again with k after mutate changes it.
func resign(t *testing.T, k key, evt *nostr.Event, mutate func(*nostr.Event)) *nostr.Event {
	t.Helper()
	c := *evt
	c.Tags = slices.Clone(evt.Tags)
	mutate(&c)
	if err := c.Sign(k.SK); err != nil {
		t.Fatal(err)
	}
	return &c
}

func TestDirectory_Register(t *testing.T) {
	env := newEnv(t)
	d := startDir(t, env.rel, env.clk, directory.Config{})
	a := testkit.NewKey(t)
	ctx := context.Background()

	got, err := d.Register(ctx, proof(t, a, "active", env.clk.Now().Add(-30*time.Second), card(a.PK)))
	if err != nil {
		t.Fatal(err)
	}
	if !got.Registered || !got.Available || got.Name != "DataViz Pro" || got.CostPerToken != 0.0008 ||
		!slices.Equal(got.Capabilities, []string{"visualization"}) || !slices.Equal(got.Specializations, []string{"data-analysis"}) {
		t.Errorf("registered agent = %+v", got)
	}
	// The registration is on the relay: any directory over it sees the heartbeat.
	stored, err := env.rel.QuerySync(ctx, nostr.Filter{Kinds: []int{events.KindHeartbeat}, Authors: []string{a.PK}})
	if err != nil || len(stored) != 1 {
		t.Fatalf("stored registration: %d, %v", len(stored), err)
	}
	if hits := d.Search(directory.Query{Capabilities: []string{"visualization"}}); !slices.Equal(ids(hits), []string{a.PK}) {
		t.Errorf("search = %v", ids(hits))
	}

	// Unregistering takes a proof by the same key, status offline.
	if err := d.Unregister(ctx, a.PK, proof(t, testkit.NewKey(t), "offline", env.clk.Now(), nil)); !errors.Is(err, directory.ErrWrongKey) {
		t.Errorf("unregister with another key's proof: %v", err)
	}
	if err := d.Unregister(ctx, a.PK, proof(t, a, "active", env.clk.Now(), nil)); !errors.Is(err, directory.ErrBadProof) {
		t.Errorf("unregister with an active heartbeat: %v", err)
	}
	if err := d.Unregister(ctx, a.PK, proof(t, a, "offline", env.clk.Now().Add(time.Second), nil)); err != nil {
		t.Fatal(err)
	}
	if x, _ := d.Get(a.PK); x.Registered || x.Available || x.Status != "offline" {
		t.Errorf("after unregister: %+v", x)
	}
	if hits := d.Search(directory.Query{}); len(hits) != 0 {
		t.Errorf("unregistered agent still ranked: %v", ids(hits))
	}
	if err := d.Unregister(ctx, testkit.NewKey(t).PK, nil); !errors.Is(err, directory.ErrBadProof) {
		t.Errorf("unregister without proof: %v", err)
	}
}

func TestDirectory_RegisterRefusals(t *testing.T) {
	env := newEnv(t)
	d := startDir(t, env.rel, env.clk, directory.Config{})
	a, b := testkit.NewKey(t), testkit.NewKey(t)
	now := env.clk.Now()
	valid := proof(t, a, "active", now, card(a.PK))
	forged := *valid
	forged.Content = `{"name":"Someone Else"}` // id and signature no longer match
	badSig := *valid
	badSig.Sig = proof(t, a, "busy", now, nil).Sig
	tests := []struct {
		name string
		evt  *nostr.Event
		want error
	}{
		{"nil", nil, directory.ErrBadProof},
		{"wrong kind", resign(t, a, valid, func(e *nostr.Event) { e.Kind = 0; e.Tags = nostr.Tags{{"bot"}}; e.Content = "{}" }), directory.ErrBadProof},
		{"content changed after signing", &forged, directory.ErrForgedProof},
		{"another event's signature", &badSig, directory.ErrForgedProof},
		{"stale", proof(t, a, "active", now.Add(-6*time.Minute), nil), directory.ErrStaleProof},
		{"from the future", proof(t, a, "active", now.Add(6*time.Minute), nil), directory.ErrStaleProof},
		{"d names another agent", resign(t, b, valid, func(e *nostr.Event) {}), directory.ErrWrongKey},
		{"agent object names another agent", proof(t, b, "active", now, card(a.PK)), directory.ErrWrongKey},
		{"offline", proof(t, a, "offline", now, nil), directory.ErrBadProof},
		{"malformed heartbeat", resign(t, a, valid, func(e *nostr.Event) { e.Tags = append(e.Tags, nostr.Tag{"load", "-3"}) }), directory.ErrBadProof},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := d.Register(context.Background(), tt.evt)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Register = %v, want %v", err, tt.want)
			}
			var perr *directory.ProofError
			if !errors.As(err, &perr) {
				t.Errorf("not a *ProofError: %T", err)
			}
			if got.ID != "" {
				t.Errorf("returned an agent: %+v", got)
			}
		})
	}
	if all := d.All(); len(all) != 0 {
		t.Errorf("refused registrations listed: %v", ids(all))
	}
	n, err := env.rel.QuerySync(context.Background(), nostr.Filter{Kinds: []int{events.KindHeartbeat}})
	if err != nil || len(n) != 0 {
		t.Errorf("refused registrations published: %d", len(n))
	}
}
