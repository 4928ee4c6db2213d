package main

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/relay"
)

// publishLessonCLI publishes a lesson about def, signed by agentSK.
func publishLessonCLI(t *testing.T, n *testNode, agentSK, def string, args ...string) *nostr.Event {
	t.Helper()
	base := []string{"lesson", "publish", "--json", "--definition", def}
	return publishedEvent(t, n.run(t, agentSK, append(base, args...)...))
}

func TestLessonPublish_ListByDefinition(t *testing.T) {
	n := openTestNode(t, relay.Limits{})
	authorKey := testkit.NewKey(t)
	authorSK, authorPK := authorKey.SK, authorKey.PK
	agentKey := testkit.NewKey(t)
	agentSK, agentPK := agentKey.SK, agentKey.PK
	def := publishDef(t, n, authorSK, "--title", "Tester", "--slug", "tester")
	otherDef := publishDef(t, n, authorSK, "--title", "Other")

	l1 := publishLessonCLI(t, n, agentSK, pointer(def, nil), "--title", "flaky tests", "--category", "testing",
		"--topic", "ci", "--content", "retry once, then investigate")
	l2 := publishLessonCLI(t, n, agentSK, npub(authorPK)+":tester", "--title", "fixtures", "--category", "style", "--content", "keep them small")
	publishLessonCLI(t, n, agentSK, otherDef.ID, "--title", "unrelated", "--content", "x")

	stored := n.query(t, nostr.Filter{IDs: []string{l1.ID}})
	if len(stored) != 1 || stored[0].PubKey != agentPK {
		t.Fatalf("lesson not stored under the agent's key")
	}
	l, err := events.ParseLesson(stored[0])
	if err != nil || l.DefinitionID != def.ID || !slices.Equal(l.Topics, []string{"ci"}) || l.Category != "testing" {
		t.Fatalf("stored lesson = %+v, %v", l, err)
	}

	var list []lessonView
	decodeJSON(t, n.run(t, "", "lesson", "list", "--definition", def.ID, "--json"), &list)
	if got := lessonIDs(list); len(got) != 2 || !slices.Contains(got, l1.ID) || !slices.Contains(got, l2.ID) {
		t.Fatalf("lesson list --definition = %v, want %s and %s", got, l1.ID, l2.ID)
	}
	decodeJSON(t, n.run(t, "", "lesson", "list", "--definition", npub(authorPK)+":tester", "--category", "style", "--json"), &list)
	if got := lessonIDs(list); !slices.Equal(got, []string{l2.ID}) {
		t.Fatalf("lesson list --category style = %v, want [%s]", got, l2.ID)
	}
	decodeJSON(t, n.run(t, "", "lesson", "list", "--search", "investigate", "--author", npub(agentPK), "--json"), &list)
	if got := lessonIDs(list); !slices.Equal(got, []string{l1.ID}) {
		t.Fatalf("lesson list --search = %v, want [%s]", got, l1.ID)
	}

	var show definitionDetail
	decodeJSON(t, n.run(t, "", "def", "show", def.ID, "--json"), &show)
	if show.Lessons != 2 {
		t.Errorf("def show: lessons = %d, want 2", show.Lessons)
	}
	if out := n.run(t, "", "lesson", "list"); !strings.Contains(out, "flaky tests") || !strings.Contains(out, "CATEGORY") {
		t.Errorf("human lesson list:\n%s", out)
	}
}

func TestLessonPublish_BadDefinitionRefusedClientSide(t *testing.T) {
	n := openTestNode(t, relay.Limits{})
	agentKey := testkit.NewKey(t)
	agentSK, agentPK := agentKey.SK, agentKey.PK
	r := n.try(t, agentSK, "lesson", "publish", "--definition", "not-an-id", "--title", "t", "--content", "c")
	if r.err == nil || exitCode(r.err) != 2 || !strings.Contains(r.err.Error(), "lesson publish: --definition") {
		t.Fatalf("err = %v, want a usage error about --definition", r.err)
	}

	missing := strings.Repeat("cd", 32)
	r = n.try(t, agentSK, "lesson", "publish", "--definition", missing, "--title", "t", "--content", "c")
	if r.err == nil || !strings.Contains(r.err.Error(), "no definition with id "+missing) {
		t.Fatalf("err = %v, want 'no definition with id'", r.err)
	}

	ownerPK := testkit.NewKey(t).PK
	profile := publishDirectProfile(t, n, agentSK, ownerPK)
	r = n.try(t, agentSK, "lesson", "publish", "--definition", profile.ID, "--title", "t", "--content", "c")
	if r.err == nil || !strings.Contains(r.err.Error(), "is kind 0, not a definition") {
		t.Fatalf("err = %v, want a wrong-kind error", r.err)
	}
	if got := n.query(t, nostr.Filter{Kinds: []int{events.KindLesson}, Authors: []string{agentPK}}); len(got) != 0 {
		t.Fatalf("%d lessons stored despite the refusals", len(got))
	}
}

func TestPublish_RelayRefusalIsReportedVerbatim(t *testing.T) {
	n := openTestNode(t, relay.Limits{MaxContentBytes: 64})
	sk := testkit.NewKey(t).SK
	r := n.try(t, sk, "def", "publish", "--title", "Big", "--content", strings.Repeat("x", 100))
	if r.err == nil || exitCode(r.err) != 1 {
		t.Fatalf("err = %v, want a refusal with exit code 1", r.err)
	}
	if want := "refused the event: invalid: content is 100 bytes, the limit is 64"; !strings.Contains(r.err.Error(), want) {
		t.Fatalf("err = %q, want it to contain %q", r.err, want)
	}
	if r.stdout != "" {
		t.Errorf("stdout after a refusal: %q", r.stdout)
	}
}

func TestSessionPublish_MalformedEventRefused(t *testing.T) {
	n := openTestNode(t, relay.Limits{})
	sk := testkit.NewKey(t).SK
	// A lesson whose definition reference is not an event id: the CLI never
	// builds one, so it is signed by hand to see the relay's refusal.
	bad := signed(t, sk, nostr.Event{Kind: events.KindLesson, Tags: nostr.Tags{{"title", "t"}, {"e", "nope"}}})
	m := &Main{Getenv: func(string) string { return "" }}
	s, err := m.dial(context.Background(), &netFlags{relays: stringList{n.URL}, timeout: DefaultTimeout})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.publish(context.Background(), bad)
	if err == nil || !strings.Contains(err.Error(), `refused the event: invalid: kind 4129: tag "e"`) {
		t.Fatalf("err = %v, want the relay's invalid: reason", err)
	}
	_, err = sign("lesson publish", nostr.Event{Kind: events.KindLesson, Tags: bad.Tags}, sk)
	if err == nil || !strings.Contains(err.Error(), "refusing to publish an invalid event") {
		t.Fatalf("sign: err = %v, want a client-side refusal", err)
	}
}

func lessonIDs(list []lessonView) []string {
	var ids []string
	for _, v := range list {
		ids = append(ids, v.ID)
	}
	return ids
}
