package agentd_test

import (
	"slices"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/agentd"
)

func TestDaemon_Interests(t *testing.T) {
	n := openNode(t, agentd.Config{})
	changes := n.d.Changes()
	if got := n.d.Interests(); got != nil {
		t.Fatalf("no agents, interests %v", got)
	}
	author, owner := newKey(t), newKey(t)
	def := n.definition(author, reviewer())
	a := n.install(agentd.InstallRequest{Definition: def.ID, Owner: owner.pk}).Agent
	waitChange(t, changes)

	sib := n.foreignAgent(def.ID, newKey(t).pk)
	lesson := n.lesson(sib.sk, def.ID, "Sibling", "Text.")
	n.effective(a.PubKey)
	waitChange(t, changes) // the composition now reaches a new author and lesson

	matches := func(evt *nostr.Event) bool {
		return slices.ContainsFunc(n.d.Interests(), func(f nostr.Filter) bool { return f.Matches(evt) })
	}
	for _, tc := range []struct {
		name string
		evt  nostr.Event
	}{
		{"a new definition version", nostr.Event{Kind: 4199, PubKey: author.pk}},
		{"a lesson on the definition", nostr.Event{Kind: 4129, Tags: nostr.Tags{{"e", def.ID}}}},
		{"a sibling's profile", nostr.Event{Kind: 0, Tags: nostr.Tags{{"bot"}, {"e", def.ID}}}},
		{"a lesson author's profile", nostr.Event{Kind: 0, PubKey: sib.pk}},
		{"the owner's claims", nostr.Event{Kind: 14199, PubKey: owner.pk}},
		{"the owner's contacts", nostr.Event{Kind: 3, PubKey: owner.pk}},
		{"a comment on a lesson", nostr.Event{Kind: 1111, Tags: nostr.Tags{{"E", lesson.ID}, {"K", "4129"}}}},
		{"a deletion of a lesson", nostr.Event{Kind: 5, Tags: nostr.Tags{{"e", lesson.ID}}}},
	} {
		if !matches(&tc.evt) {
			t.Errorf("interests do not ask for %s", tc.name)
		}
	}
	if matches(&nostr.Event{Kind: 4129, Tags: nostr.Tags{{"e", owner.pk}}}) {
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
	case <-time.After(5 * time.Second):
		t.Fatal("nothing on Changes")
	}
}
