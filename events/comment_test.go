package events_test

import (
	"reflect"
	"testing"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/nbd-wtf/go-nostr"
)

func TestComment_RoundTrip(t *testing.T) {
	kp := testkit.NewKey(t)
	sk, pk := kp.SK, kp.PK
	lesson, lessonAuthor := hexID(10), hexID(11)
	parent, parentAuthor := hexID(12), hexID(13)
	tests := []struct {
		name    string
		comment events.Comment
		want    events.Comment
	}{
		{"top-level on a lesson",
			events.Comment{RootID: lesson, RootAuthor: lessonAuthor, Content: "Also run go vet."},
			events.Comment{RootID: lesson, RootAuthor: lessonAuthor, RootKind: 4129,
				ParentID: lesson, ParentAuthor: lessonAuthor, ParentKind: 4129, Content: "Also run go vet."}},
		{"reply to a comment",
			events.Comment{RootID: lesson, RootAuthor: lessonAuthor, ParentID: parent, ParentAuthor: parentAuthor, Content: "Agreed."},
			events.Comment{RootID: lesson, RootAuthor: lessonAuthor, RootKind: 4129,
				ParentID: parent, ParentAuthor: parentAuthor, ParentKind: 1111, Content: "Agreed."}},
		{"authors unknown",
			events.Comment{RootID: lesson, ParentID: parent, Content: "?"},
			events.Comment{RootID: lesson, RootKind: 4129, ParentID: parent, ParentKind: 1111, Content: "?"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evt := signed(t, sk, tt.comment.Template())
			if !events.IsLessonComment(evt) {
				t.Error("IsLessonComment = false")
			}
			got, err := events.ParseComment(evt)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			want.ID, want.PubKey, want.CreatedAt = evt.ID, pk, testTime
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("got  %+v\nwant %+v", *got, want)
			}
		})
	}
}

func TestComment_TemplateIsStrictNIP22(t *testing.T) {
	c := events.Comment{RootID: hexID(1), RootAuthor: hexID(2), ParentID: hexID(3), ParentAuthor: hexID(4)}
	got := c.Template().Tags
	want := nostr.Tags{
		{"E", hexID(1), "", hexID(2)}, {"K", "4129"}, {"P", hexID(2)},
		{"e", hexID(3), "", hexID(4)}, {"k", "1111"}, {"p", hexID(4)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

func TestParseComment_Lenient(t *testing.T) {
	root, reply, author := hexID(1), hexID(2), hexID(3)
	tests := []struct {
		name string
		evt  *nostr.Event
		want events.Comment
	}{
		{"E wins over e", event(1111, "", nostr.Tag{"E", root}, nostr.Tag{"K", "4129"}, nostr.Tag{"e", reply}, nostr.Tag{"k", "1111"}),
			events.Comment{RootID: root, RootKind: 4129, ParentID: reply, ParentKind: 1111}},
		{"e marked root, e marked reply (NIP-10 style)",
			event(1111, "", nostr.Tag{"K", "4129"}, nostr.Tag{"e", reply, "", "reply"}, nostr.Tag{"e", root, "", "root", author}),
			events.Comment{RootID: root, RootAuthor: author, RootKind: 4129, ParentID: reply, ParentKind: 1111}},
		{"any e is root and parent", event(1111, "", nostr.Tag{"K", "4129"}, nostr.Tag{"e", root}),
			events.Comment{RootID: root, RootKind: 4129, ParentID: root, ParentKind: 4129}},
		{"E only: parent is the root", event(1111, "", nostr.Tag{"E", root, "", author}, nostr.Tag{"K", "4129"}),
			events.Comment{RootID: root, RootAuthor: author, RootKind: 4129, ParentID: root, ParentAuthor: author, ParentKind: 4129}},
		{"other root kind still parses", event(1111, "", nostr.Tag{"E", root}, nostr.Tag{"K", "1"}, nostr.Tag{"e", root}, nostr.Tag{"k", "1"}),
			events.Comment{RootID: root, RootKind: 1, ParentID: root, ParentKind: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := events.ParseComment(tt.evt)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			want.CreatedAt = testTime
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("got  %+v\nwant %+v", *got, want)
			}
		})
	}
}

func TestParseComment_Refuses(t *testing.T) {
	tests := []struct {
		name    string
		evt     *nostr.Event
		wantMsg string
	}{
		{"no root reference", event(1111, "", nostr.Tag{"A", "30023:x:y"}, nostr.Tag{"K", "30023"}),
			`kind 1111: tag "E": missing root event reference`},
		{"non-lesson root with a bad id", event(1111, "", nostr.Tag{"E", "x"}, nostr.Tag{"K", "1"}),
			`kind 1111: tag "E": not a 64-hex event id`},
		{"comment without K, bad root id", event(1111, "", nostr.Tag{"e", "x", "", "root"}),
			`kind 1111: tag "e": not a 64-hex event id`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := events.ParseComment(tt.evt); err == nil || err.Error() != tt.wantMsg {
				t.Errorf("got %v, want %s", err, tt.wantMsg)
			}
		})
	}
}

func TestIsLessonComment(t *testing.T) {
	tests := []struct {
		evt  *nostr.Event
		want bool
	}{
		{event(1111, "", nostr.Tag{"K", "4129"}), true},
		{event(1111, "", nostr.Tag{"K", "1"}), false},
		{event(1111, "", nostr.Tag{"k", "4129"}), true},
		{event(1111, "", nostr.Tag{"K", "1"}, nostr.Tag{"k", "4129"}), false},
		{event(1111, "", nostr.Tag{"E", hexID(1)}), false},
		{event(1, "", nostr.Tag{"K", "4129"}), false},
		{nil, false},
	}
	for i, tt := range tests {
		if got := events.IsLessonComment(tt.evt); got != tt.want {
			t.Errorf("%d: got %v, want %v", i, got, tt.want)
		}
	}
}
