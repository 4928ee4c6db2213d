package directory_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd/directory"
	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/relay"
)

// publishMany signs and publishes evts from 16 goroutines (the relay
// commits them in batches).
func publishMany(t *testing.T, rel *relay.Relay, evts []*nostr.Event) {
	t.Helper()
	testkit.Parallel(t, len(evts), 16, func(i int) error { return rel.Publish(context.Background(), evts[i]) })
}

// signedAt signs tmpl with a fresh key at ts.
func signedAt(t *testing.T, ts nostr.Timestamp, tmpl nostr.Event) *nostr.Event {
	t.Helper()
	tmpl.CreatedAt = ts
	if err := tmpl.Sign(nostr.GeneratePrivateKey()); err != nil {
		t.Fatal(err)
	}
	return &tmpl
}

// Anyone chooses created_at: 1,201 bot profiles and definitions at one
// second, more than a page of the load, must not end the load there.
func TestDirectory_LoadPagesThroughACrowdedSecond(t *testing.T) {
	env := newEnv(t)
	crowded := nostr.Timestamp(env.clk.Now().Unix()) - 3600
	var evts []*nostr.Event
	var olderDefs, olderAgents []string
	for i := range 3 {
		def := signedAt(t, crowded-10, (&events.Definition{Title: fmt.Sprint("older def ", i)}).Template())
		agent := signedAt(t, crowded-5, (&events.Profile{Bot: true, DefinitionID: def.ID}).Template())
		evts = append(evts, def, agent)
		olderDefs, olderAgents = append(olderDefs, def.ID), append(olderAgents, agent.PubKey)
	}
	for i := range 1201 {
		evts = append(evts,
			signedAt(t, crowded, (&events.Profile{Bot: true, Name: fmt.Sprint("crowd ", i)}).Template()),
			signedAt(t, crowded, (&events.Definition{Title: fmt.Sprint("crowd def ", i)}).Template()))
	}
	newest := signedAt(t, crowded+1, (&events.Profile{Bot: true, Name: "newest"}).Template())
	publishMany(t, env.rel, append(evts, newest))

	d := startDir(t, env.rel, env.clk, directory.Config{})
	if got := d.Stats().Agents; got != 1201+3+1 {
		t.Errorf("loaded %d agents, want %d", got, 1201+3+1)
	}
	if got := d.DefinitionCount(); got != 1201+3 {
		t.Errorf("loaded %d definitions, want %d", got, 1201+3)
	}
	for i, id := range olderAgents {
		a, ok := d.Get(id)
		if want := fmt.Sprint("older def ", i); !ok || a.Name != want || a.DefinitionID != olderDefs[i] {
			t.Errorf("older agent %d: listed %v, name %q (want %q: its definition's title)", i, ok, a.Name, want)
		}
	}
}

// Definitions pages walk every definition once, newest first, ties by id,
// however many share a second.
func TestDirectory_DefinitionsPagesWalkEachOnce(t *testing.T) {
	env := newEnv(t)
	at := nostr.Timestamp(env.clk.Now().Unix())
	var evts []*nostr.Event
	for i := range 25 {
		evts = append(evts, signedAt(t, at+nostr.Timestamp(i/10), (&events.Definition{Title: fmt.Sprint("def ", i)}).Template()))
	}
	publishMany(t, env.rel, evts)
	d := startDir(t, env.rel, env.clk, directory.Config{})
	seen := map[string]int{}
	var prev *directory.Definition
	cur := directory.DefCursor{}
	for range 20 {
		page, next := d.Definitions(cur, 4)
		for i := range page {
			seen[page[i].ID]++
			if p := prev; p != nil && (page[i].CreatedAt > p.CreatedAt || page[i].CreatedAt == p.CreatedAt && page[i].ID < p.ID) {
				t.Errorf("out of order: %v after %v", page[i], *p)
			}
			prev = &page[i]
		}
		if next.IsZero() {
			break
		}
		cur = next
	}
	if len(seen) != len(evts) {
		t.Errorf("walked %d definitions, want %d", len(seen), len(evts))
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s listed %d times", id, n)
		}
	}
}

// The directory keeps of each event only bounded fields: a definition's
// 60 KB of instructions, a name of 10,000 runes or a review of 50 KB are
// cut in the index (the store keeps them whole).
func TestDirectory_EntriesAreBounded(t *testing.T) {
	env := newEnv(t)
	now := env.clk.Now()
	long := strings.Repeat("é", 10_000)
	def := publish(t, env.rel, testkit.NewKey(t), now, (&events.Definition{Title: long, Role: long,
		Instructions: strings.Repeat("x", 60_000), Tools: strings.Fields(strings.Repeat("tool ", 500))}).Template())
	agent := testkit.NewKey(t)
	botProfile(t, env.rel, agent, now, long, "", def.ID)
	d := startDir(t, env.rel, env.clk, directory.Config{})
	if _, err := d.Evaluate(context.Background(), testkit.NewKey(t).SK, agent.PK, 5, strings.Repeat("r", 50_000), ""); err != nil {
		t.Fatal(err)
	}
	s, ok := d.Definition(def.ID)
	if !ok || utf8.RuneCountInString(s.Title) > directory.MaxNameRunes+1 || utf8.RuneCountInString(s.Role) > directory.MaxTextRunes+1 ||
		len(s.Tools) > directory.MaxListItems {
		t.Errorf("definition summary: title %d runes, role %d runes, %d tools", utf8.RuneCountInString(s.Title), utf8.RuneCountInString(s.Role), len(s.Tools))
	}
	a, _ := d.Get(agent.PK)
	if n := utf8.RuneCountInString(a.Name); n > directory.MaxNameRunes+1 {
		t.Errorf("agent name: %d runes", n)
	}
	m, _ := d.Metrics(agent.PK)
	if len(m.Reviews) != 1 || utf8.RuneCountInString(m.Reviews[0].Text) > directory.MaxTextRunes+1 {
		t.Errorf("reviews: %+v", m.Reviews)
	}
}

// An owner's claims published before the agent's profile (the directory
// did not know the agent then) still verify it: the stored claims event
// is read when the profile arrives.
func TestDirectory_ClaimsBeforeProfileVerify(t *testing.T) {
	env := newEnv(t)
	owner, agent := testkit.NewKey(t), testkit.NewKey(t)
	d := startDir(t, env.rel, env.clk, directory.Config{})
	others := make([]string, 0, 1000)
	for range 1000 {
		others = append(others, testkit.NewKey(t).PK)
	}
	claims(t, env.rel, owner, env.clk.Now(), append(others, agent.PK)...)
	botProfile(t, env.rel, agent, env.clk.Now().Add(time.Second), "late", owner.PK, "")
	agentWhere(t, d, agent.PK, "verified", func(a directory.Agent) bool { return a.OwnerVerified })
}

// A second too large for the load's budget is cut, never the seconds
// before it: 600 definitions of 10 kB in one second with a 4 MB budget
// load partly, and the three older ones all.
func TestDirectory_LoadSkipsOnlyTheRestOfAnOverBudgetSecond(t *testing.T) {
	directory.SetLoadBudget(t, 4<<20)
	env := newEnv(t)
	crowded := nostr.Timestamp(env.clk.Now().Unix()) - 3600
	var evts []*nostr.Event
	for i := range 3 {
		evts = append(evts, signedAt(t, crowded-nostr.Timestamp(1+i), (&events.Definition{Title: fmt.Sprint("older ", i)}).Template()))
	}
	pad := strings.Repeat("p", 10_000)
	for i := range 600 {
		evts = append(evts, signedAt(t, crowded, (&events.Definition{Title: fmt.Sprint("crowd ", i), Instructions: pad}).Template()))
	}
	publishMany(t, env.rel, evts)
	d := startDir(t, env.rel, env.clk, directory.Config{})
	for _, evt := range evts[:3] {
		if _, ok := d.Definition(evt.ID); !ok {
			t.Errorf("older definition %s not loaded", evt.ID)
		}
	}
	if n := d.DefinitionCount(); n < 3+loadPageForTest || n >= 603 {
		t.Errorf("loaded %d definitions, want the older 3 and part of the crowded second", n)
	}
}

// loadPageForTest is the load's page (the first page always loads).
const loadPageForTest = 500
