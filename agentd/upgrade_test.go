package agentd_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
)

func TestDaemon_Upgrade(t *testing.T) {
	n := openNode(t, agentd.Config{})
	author, owner := testkit.NewKey(t), testkit.NewKey(t)
	v1 := n.definition(author, reviewer())
	a := n.install(agentd.InstallRequest{Definition: v1.ID, Owner: owner.PK}).Agent
	ctx := context.Background()

	plan, err := n.d.PlanUpgrade(ctx, a.PubKey, "")
	if err != nil || !plan.UpToDate || plan.Applied {
		t.Fatalf("plan with one version = %+v, %v; want up to date", plan, err)
	}

	d2 := reviewer()
	d2.Version, d2.Role, d2.Tools, d2.Content = "2", "You review Go and SQL.", []string{"read_file", "comment", "web_search"}, "# Notes\nNew."
	v2 := n.definition(author, d2)

	plan, err = n.d.PlanUpgrade(ctx, a.PubKey, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []agentd.FieldChange{{Field: "role", From: v1.Role, To: v2.Role}, {Field: "version", From: "1", To: "2"}}
	if plan.UpToDate || plan.Applied || plan.From.ID != v1.ID || plan.To.ID != v2.ID ||
		!slices.Equal(plan.Changes, want) || !slices.Equal(plan.ToolsAdded, []string{"web_search"}) ||
		!slices.Equal(plan.ToolsRemoved, []string{"exec"}) || !plan.ContentChanged {
		t.Fatalf("plan = %+v", plan)
	}
	if eff := n.effective(a.PubKey); !strings.Contains(eff.Prompt, v1.Role) {
		t.Errorf("a plan changed the prompt: %q", eff.Prompt)
	}
	if v, _ := n.d.Show(ctx, a.PubKey); v.Latest == nil || v.Latest.ID != v2.ID {
		t.Errorf("show: latest = %+v, want %s", v.Latest, v2.ID)
	}

	plan, err = n.d.Upgrade(ctx, a.PubKey, "")
	if err != nil || !plan.Applied {
		t.Fatalf("upgrade = %+v, %v", plan, err)
	}
	got, _ := n.d.Lookup(a.PubKey)
	if got.DefinitionID != v2.ID || got.InstalledFrom != v1.ID || got.UpgradedAt.IsZero() {
		t.Errorf("after upgrade: %+v", got)
	}
	eff := n.effective(a.PubKey)
	if !strings.Contains(eff.Prompt, v2.Role) || !slices.Equal(eff.Tools, v2.Tools) {
		t.Errorf("after upgrade: prompt %q, tools %v", eff.Prompt, eff.Tools)
	}
	prof := newestProfile(t, n, a.PubKey)
	if prof.DefinitionID != v2.ID {
		t.Errorf("the agent's kind 0 points at %s, want %s", prof.DefinitionID, v2.ID)
	}
	if v, _ := n.d.Show(ctx, a.PubKey); v.Latest != nil {
		t.Errorf("show after upgrade: latest = %+v, want none", v.Latest)
	}

	t.Run("explicit version, back", func(t *testing.T) {
		plan, err := n.d.Upgrade(ctx, a.PubKey, v1.ID)
		if err != nil || !plan.Applied || plan.To.ID != v1.ID {
			t.Fatalf("switch back = %+v, %v", plan, err)
		}
	})
	t.Run("another definition", func(t *testing.T) {
		other := n.definition(author, events.Definition{Slug: "other", Title: "Other"})
		if _, err := n.d.Upgrade(ctx, a.PubKey, other.ID); !errors.Is(err, agentd.ErrOtherDefinition) {
			t.Errorf("upgrade to another definition: %v", err)
		}
	})
}

func TestDaemon_Upgrade_auto(t *testing.T) {
	n := openNode(t, agentd.Config{})
	author, owner := testkit.NewKey(t), testkit.NewKey(t)
	v1 := n.definition(author, reviewer())
	auto := n.install(agentd.InstallRequest{Definition: v1.ID, Owner: owner.PK, Name: "auto", AutoUpgrade: true}).Agent
	manual := n.install(agentd.InstallRequest{Definition: v1.ID, Owner: owner.PK, Name: "manual"}).Agent

	d2 := reviewer()
	d2.Version, d2.Role = "2", "You review Go code, version two."
	v2 := n.definition(author, d2)

	testkit.WaitFor(t, within, "the automatic upgrade", func() bool {
		a, _ := n.d.Lookup(auto.PubKey)
		return a.DefinitionID == v2.ID
	})
	testkit.WaitFor(t, within, "the upgraded prompt", func() bool {
		return strings.Contains(n.effective(auto.PubKey).Prompt, v2.Role)
	})
	if m, _ := n.d.Lookup(manual.PubKey); m.DefinitionID != v1.ID {
		t.Errorf("an agent without auto_upgrade moved to %s", m.DefinitionID)
	}
	if p := newestProfile(t, n, auto.PubKey); p.DefinitionID != v2.ID {
		t.Errorf("auto-upgraded agent's kind 0 points at %s", p.DefinitionID)
	}

	t.Run("switched on later, catches up", func(t *testing.T) {
		if _, err := n.d.SetAutoUpgrade(context.Background(), manual.PubKey, true); err != nil {
			t.Fatal(err)
		}
		testkit.WaitFor(t, within, "the catch-up upgrade", func() bool {
			a, _ := n.d.Lookup(manual.PubKey)
			return a.DefinitionID == v2.ID
		})
	})
}

// newestProfile returns the agent's newest stored kind 0.
func newestProfile(t *testing.T, n *node, pk string) *events.Profile {
	t.Helper()
	evts, err := n.r.QuerySync(context.Background(), nostr.Filter{Kinds: []int{0}, Authors: []string{pk}, Limit: 1})
	if err != nil || len(evts) == 0 {
		t.Fatalf("no kind 0 for %s: %v", pk, err)
	}
	p, err := events.ParseProfile(evts[0])
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDaemon_Upgrade_autoAfterRestart(t *testing.T) {
	n := openNode(t, agentd.Config{})
	author := testkit.NewKey(t)
	v1 := n.definition(author, reviewer())
	a := n.install(agentd.InstallRequest{Definition: v1.ID, Owner: testkit.NewKey(t).PK, AutoUpgrade: true}).Agent
	n.closeDaemon()
	d2 := reviewer()
	d2.Version = "2"
	v2 := n.definition(author, d2) // stored while no daemon listens
	d, err := n.reopen(nil)
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, within, "the upgrade at start", func() bool {
		got, _ := d.Lookup(a.PubKey)
		return got.DefinitionID == v2.ID
	})
}
