package events_test

import (
	"reflect"
	"testing"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
)

func TestNudge_RoundTrip(t *testing.T) {
	kp := testkit.NewKey(t)
	sk, pk := kp.SK, kp.PK
	tests := []struct {
		name  string
		nudge events.Nudge
	}{
		{"only-tool", events.Nudge{Title: "read only", OnlyTools: []string{"read_file", "grep"}}},
		{"allow and deny", events.Nudge{Title: "no shell", AllowTools: []string{"fetch"}, DenyTools: []string{"shell"}, Content: "Never run commands."}},
		{"content only", events.Nudge{Content: "Answer in one sentence."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evt := signed(t, sk, tt.nudge.Template())
			got, err := events.ParseNudge(evt)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.nudge
			want.ID, want.PubKey, want.CreatedAt = evt.ID, pk, testTime
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("got  %+v\nwant %+v", *got, want)
			}
		})
	}
}

func TestLesson_RoundTrip(t *testing.T) {
	kp := testkit.NewKey(t)
	sk, pk := kp.SK, kp.PK
	tests := []struct {
		name   string
		lesson events.Lesson
	}{
		{"minimal", events.Lesson{DefinitionID: hexID(7), DefinitionIDs: []string{hexID(7)}, Title: "Run gofmt before review"}},
		{"full", events.Lesson{DefinitionID: hexID(7), DefinitionIDs: []string{hexID(7)}, Title: "Prefer table tests", Category: "testing",
			Topics: []string{"go", "tests"}, Content: "Table tests keep cases readable."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evt := signed(t, sk, tt.lesson.Template())
			got, err := events.ParseLesson(evt)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.lesson
			want.ID, want.PubKey, want.CreatedAt = evt.ID, pk, testTime
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("got  %+v\nwant %+v", *got, want)
			}
		})
	}
}

func TestParseLesson_Refuses(t *testing.T) {
	bad := events.Lesson{DefinitionID: "not-an-id", Title: "t"}
	tmpl := bad.Template()
	if _, err := events.ParseLesson(&tmpl); err == nil || err.Error() != `kind 4129: tag "e": not a 64-hex event id` {
		t.Fatalf("got %v", err)
	}
}
