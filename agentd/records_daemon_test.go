package agentd_test

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/agentd/keystore"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
)

// TestDaemon_sharedRecords: two daemons over one Records, one Keys and one
// Token (as two instances on one database are): an agent installed through
// one is listed by the other after Reload, signs there, and its removal
// through the second is seen by the first.
func TestDaemon_sharedRecords(t *testing.T) {
	ctx := context.Background()
	shared := t.TempDir()
	recs, err := agentd.OpenFileRecords(filepath.Join(shared, "agents.json"))
	if err != nil {
		t.Fatal(err)
	}
	keys, err := keystore.Open(filepath.Join(shared, "keys"), keystore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	place := &placement{}
	cfg := agentd.Config{Records: recs, Keys: keys, Token: "shared-token-0123456789abcdef0123456789", Placement: place}
	a := openNode(t, cfg)
	b := openNode(t, cfg)
	author, owner := testkit.NewKey(t), testkit.NewKey(t)
	tmpl := reviewer()
	evt := a.publish(author.SK, tmpl.Template())
	if err := b.r.Publish(ctx, evt); err != nil { // one database in Postgres mode: both relays have it
		t.Fatal(err)
	}
	def, err := events.ParseDefinition(evt)
	if err != nil {
		t.Fatal(err)
	}
	got := a.install(agentd.InstallRequest{Definition: def.ID, Owner: owner.PK}).Agent

	if len(b.d.List()) != 0 {
		t.Fatal("b lists the agent before Reload")
	}
	if err := b.d.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if list := b.d.List(); len(list) != 1 || list[0].PubKey != got.PubKey {
		t.Fatalf("b lists %+v, want the installed agent", list)
	}
	if _, err := b.d.Effective(ctx, got.PubKey); err != nil {
		t.Errorf("b composes the agent: %v", err)
	}
	if _, err := b.d.Remove(ctx, got.PubKey, false); err != nil {
		t.Fatal(err)
	}
	if err := a.d.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if list := a.d.List(); len(list) != 0 {
		t.Errorf("a still lists %+v after b removed it", list)
	}
	if got, want := place.log(), []string{"add " + got.PubKey, "remove " + got.PubKey}; !slices.Equal(got, want) {
		t.Errorf("placement calls %v, want %v", got, want)
	}
}

// placement records Placement calls.
type placement struct {
	mu    sync.Mutex
	calls []string
}

func (p *placement) Add(_ context.Context, agent string) error    { return p.rec("add " + agent) }
func (p *placement) Remove(_ context.Context, agent string) error { return p.rec("remove " + agent) }

func (p *placement) rec(s string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, s)
	return nil
}

func (p *placement) log() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.calls)
}
