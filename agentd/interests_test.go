package agentd_test

import (
	"slices"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/internal/testkit"
)

func TestDaemon_Interests(t *testing.T) {
	n := openNode(t, agentd.Config{})
	changes := n.d.Changes()
	if got := n.d.Interests(); got != nil {
		t.Fatalf("no agents, interests %v", got)
	}
	author, owner := testkit.NewKey(t), testkit.NewKey(t)
	def := n.definition(author, reviewer())
	a := n.install(agentd.InstallRequest{Definition: def.ID, Owner: owner.PK}).Agent
	waitChange(t, changes)

	sib := n.foreignAgent(def.ID, testkit.NewKey(t).PK)
	lesson := n.lesson(sib.SK, def.ID, "Sibling", "Text.")
	n.effective(a.PubKey)
	waitChange(t, changes) // the composition now reaches a new author and lesson

	matches := func(evt *nostr.Event) bool {
		return slices.ContainsFunc(n.d.Interests(), func(f nostr.Filter) bool { return f.Matches(evt) })
	}
	for _, tc := range []struct {
		name string
		evt  nostr.Event
	}{
		{"a new definition version", nostr.Event{Kind: 4199, PubKey: author.PK}},
		{"a lesson on the definition", nostr.Event{Kind: 4129, Tags: nostr.Tags{{"e", def.ID}}}},
		{"a sibling's profile", nostr.Event{Kind: 0, Tags: nostr.Tags{{"bot"}, {"e", def.ID}}}},
		{"a lesson author's profile", nostr.Event{Kind: 0, PubKey: sib.PK}},
		{"the owner's claims", nostr.Event{Kind: 14199, PubKey: owner.PK}},
		{"the owner's contacts", nostr.Event{Kind: 3, PubKey: owner.PK}},
		{"a comment on a lesson", nostr.Event{Kind: 1111, Tags: nostr.Tags{{"E", lesson.ID}, {"K", "4129"}}}},
		{"a deletion of a lesson", nostr.Event{Kind: 5, Tags: nostr.Tags{{"e", lesson.ID}}}},
	} {
		if !matches(&tc.evt) {
			t.Errorf("interests do not ask for %s", tc.name)
		}
	}
	if matches(&nostr.Event{Kind: 4129, Tags: nostr.Tags{{"e", owner.PK}}}) {
		t.Error("interests ask for lessons of another definition")
	}
	out := n.d.Outbox()
	if len(out) != 1 || !out[0].Matches(&nostr.Event{Kind: 4129, PubKey: a.PubKey}) {
		t.Errorf("outbox = %v", out)
	}
}

func waitChange(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatal("nothing on Changes")
	}
}
