package directory_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
)

func TestDirectory_OwnershipVerifiedBothWays(t *testing.T) {
	env := newEnv(t)
	owner, impostor := testkit.NewKey(t), testkit.NewKey(t)
	claimed, unclaimed := testkit.NewKey(t), testkit.NewKey(t)
	now := env.clk.Now()
	def := publish(t, env.rel, testkit.NewKey(t), now, (&events.Definition{Title: "Code Reviewer", Tools: []string{"git.diff", "code.review"}}).Template())
	// Published before Start: the directory loads them.
	botProfile(t, env.rel, claimed, now, "", owner.PK, def.ID)
	botProfile(t, env.rel, unclaimed, now, "Lonely", owner.PK, "")
	claims(t, env.rel, impostor, now, unclaimed.PK) // someone else claims it: no ownership
	d := startDir(t, env.rel, env.clk, directory.Config{Allowlist: []string{testkit.NewKey(t).PK}})

	a, ok := d.Get(claimed.PK)
	if !ok || a.Owner != owner.PK || a.OwnerVerified {
		t.Fatalf("before the owner's claims: %+v", a)
	}
	if a.Name != "Code Reviewer" || a.DefinitionID != def.ID || !slices.Equal(a.Capabilities, []string{"code.review", "git.diff"}) {
		t.Errorf("from the definition: name %q def %q caps %v", a.Name, a.DefinitionID, a.Capabilities)
	}
	if a.Available || a.Status != "" {
		t.Errorf("available without a heartbeat: %+v", a)
	}

	// The owner's review counts half while the link is one-sided...
	beat(t, env.rel, claimed, now, directory.Status{})
	agentWhere(t, d, claimed.PK, "heartbeat", func(a directory.Agent) bool { return a.Available })
	stranger := testkit.NewKey(t)
	ctx := context.Background()
	if _, err := d.Evaluate(ctx, owner.SK, claimed.PK, 10, "", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Evaluate(ctx, stranger.SK, claimed.PK, 4, "", ""); err != nil {
		t.Fatal(err)
	}
	if a, _ := d.Get(claimed.PK); a.QualityScore != 7 { // both 0.5: plain mean
		t.Errorf("unverified owner: score %v, want 7", a.QualityScore)
	}
	// ...and fully once the owner's 14199 lists the agent: verification and score follow live.
	claims(t, env.rel, owner, now, claimed.PK)
	a = agentWhere(t, d, claimed.PK, "verified", func(a directory.Agent) bool { return a.OwnerVerified })
	if a.QualityScore != 8 { // (10 + 4·0.5) / 1.5
		t.Errorf("verified owner: score %v, want 8", a.QualityScore)
	}

	u, _ := d.Get(unclaimed.PK)
	if u.OwnerVerified || u.Owner != owner.PK || u.Name != "Lonely" {
		t.Errorf("agent its owner never claimed: %+v", u)
	}
}

func TestDirectory_ProfileWithoutBotIsNotAnAgent(t *testing.T) {
	env := newEnv(t)
	d := startDir(t, env.rel, env.clk, directory.Config{})
	person, agent := testkit.NewKey(t), testkit.NewKey(t)
	publish(t, env.rel, person, env.clk.Now(), (&events.Profile{Name: "Alice"}).Template())
	botProfile(t, env.rel, agent, env.clk.Now(), "Bot", "", "")
	agentWhere(t, d, agent.PK, "bot listed", func(directory.Agent) bool { return true })
	if _, ok := d.Get(person.PK); ok {
		t.Error("a profile without [\"bot\"] is listed as an agent")
	}
	// The bot's newer profile drops ["bot"]: it is no longer an agent.
	publish(t, env.rel, agent, env.clk.Now().Add(time.Second), (&events.Profile{Name: "Bot"}).Template())
	testkit.WaitFor(t, within, "bot unlisted", func() bool { _, ok := d.Get(agent.PK); return !ok })
	if n := d.Stats().Agents; n != 0 {
		t.Errorf("%d agents listed", n)
	}
}
