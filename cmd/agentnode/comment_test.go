package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/agentnode/agentnode/relay"
)

// firstTag returns the first tag named name (nil if none).
func firstTag(evt *nostr.Event, name string) nostr.Tag {
	for _, tag := range evt.Tags {
		if len(tag) > 0 && tag[0] == name {
			return tag
		}
	}
	return nil
}

// wantTag checks the first tag named name has value (and, if given, author at index 3).
func wantTag(t *testing.T, evt *nostr.Event, name, value string) {
	t.Helper()
	tag := firstTag(evt, name)
	if len(tag) < 2 || tag[1] != value {
		t.Errorf("tag %q = %v, want value %s", name, tag, value)
	}
}

func TestComment_StrictNIP22Shape(t *testing.T) {
	n := openTestNode(t, relay.Limits{})
	authorSK := testkit.NewKey(t).SK
	agentKey := testkit.NewKey(t)
	agentSK, agentPK := agentKey.SK, agentKey.PK
	humanKey := testkit.NewKey(t)
	humanSK, humanPK := humanKey.SK, humanKey.PK
	otherKey := testkit.NewKey(t)
	otherSK, otherPK := otherKey.SK, otherKey.PK
	def := publishDef(t, n, authorSK, "--title", "Tester")
	lesson := publishLessonCLI(t, n, agentSK, def.ID, "--title", "flaky tests", "--content", "retry once")

	top := publishedEvent(t, n.run(t, humanSK, "comment", pointer(lesson, nil), "--content", "retry twice", "--json"))
	if top.Kind != 1111 || top.PubKey != humanPK {
		t.Fatalf("comment kind %d by %s", top.Kind, top.PubKey)
	}
	wantTag(t, top, "E", lesson.ID)
	wantTag(t, top, "K", "4129")
	wantTag(t, top, "P", agentPK)
	wantTag(t, top, "e", lesson.ID)
	wantTag(t, top, "k", "4129")
	wantTag(t, top, "p", agentPK)
	if got := firstTag(top, "E"); len(got) < 4 || got[3] != agentPK {
		t.Errorf("E tag carries no author hint: %v", got)
	}

	// flags after the positional argument work too, and replies point at the parent
	reply := publishedEvent(t, n.run(t, otherSK, "comment", lesson.ID, "--reply-to", top.ID, "--content", "agreed", "--json"))
	wantTag(t, reply, "E", lesson.ID)
	wantTag(t, reply, "K", "4129")
	wantTag(t, reply, "P", agentPK)
	wantTag(t, reply, "e", top.ID)
	wantTag(t, reply, "k", "1111")
	wantTag(t, reply, "p", humanPK)
	if reply.PubKey != otherPK {
		t.Errorf("reply signed by %s, want %s", reply.PubKey, otherPK)
	}
	stored := n.query(t, nostr.Filter{Kinds: []int{1111}, Tags: nostr.TagMap{"E": {lesson.ID}}})
	var ids []string
	for _, e := range stored {
		ids = append(ids, e.ID)
	}
	if len(ids) != 2 || !slices.Contains(ids, top.ID) || !slices.Contains(ids, reply.ID) {
		t.Fatalf("relay holds comments %v on the lesson, want %s and %s", ids, top.ID, reply.ID)
	}
}

func TestComment_Refusals(t *testing.T) {
	n := openTestNode(t, relay.Limits{})
	authorSK := testkit.NewKey(t).SK
	agentSK := testkit.NewKey(t).SK
	def := publishDef(t, n, authorSK, "--title", "Tester")
	lessonA := publishLessonCLI(t, n, agentSK, def.ID, "--title", "a", "--content", "a")
	lessonB := publishLessonCLI(t, n, agentSK, def.ID, "--title", "b", "--content", "b")
	onA := publishedEvent(t, n.run(t, authorSK, "comment", lessonA.ID, "--content", "on a", "--json"))

	cases := []struct {
		name string
		args []string
		want string
	}{
		{"reply to a comment on another lesson", []string{lessonB.ID, "--reply-to", onA.ID, "--content", "x"}, "is on " + lessonA.ID + ", not on lesson " + lessonB.ID},
		{"not a lesson", []string{def.ID, "--content", "x"}, "is kind 4199, not a lesson (4129)"},
		{"missing lesson", []string{strings.Repeat("ef", 32), "--content", "x"}, "no lesson with id"},
		{"no content", []string{lessonA.ID}, "--content"},
		{"two lessons", []string{lessonA.ID, lessonB.ID, "--content", "x"}, "exactly one lesson"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := n.try(t, authorSK, append([]string{"comment"}, c.args...)...)
			if r.err == nil || !strings.Contains(r.err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", r.err, c.want)
			}
		})
	}
}
