package events_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/nbd-wtf/go-nostr"
)

func TestProfile_RoundTrip(t *testing.T) {
	kp := testkit.NewKey(t)
	sk, pk := kp.SK, kp.PK
	tests := []struct {
		name    string
		profile events.Profile
		want    events.Profile
	}{
		{"agent profile",
			events.Profile{Bot: true, DefinitionID: hexID(1), Owner: hexID(2), Name: "Code Reviewer",
				Metadata: map[string]any{"about": "I review <Go> & more", "lud16": "bot@example.com", "n": json.Number("12345678901234567890")}},
			events.Profile{Bot: true, DefinitionID: hexID(1), Owner: hexID(2), Owners: []string{hexID(2)}, Name: "Code Reviewer",
				Metadata: map[string]any{"name": "Code Reviewer", "about": "I review <Go> & more", "lud16": "bot@example.com", "n": json.Number("12345678901234567890")}}},
		{"name only",
			events.Profile{Bot: true, Name: "Scout"},
			events.Profile{Bot: true, Name: "Scout", Metadata: map[string]any{"name": "Scout"}}},
		{"human profile",
			events.Profile{Metadata: map[string]any{"name": "alice"}},
			events.Profile{Name: "alice", Metadata: map[string]any{"name": "alice"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evt := signed(t, sk, tt.profile.Template())
			got, err := events.ParseProfile(evt)
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

func TestProfile_TemplateKeepsMetadata(t *testing.T) {
	meta := map[string]any{"name": "old"}
	p := events.Profile{Name: "new", Metadata: meta}
	if got := p.Template().Content; got != `{"name":"new"}` {
		t.Errorf("content = %s", got)
	}
	if meta["name"] != "old" {
		t.Error("Template mutated Metadata")
	}
}

func TestParseProfile(t *testing.T) {
	tests := []struct {
		name    string
		evt     *nostr.Event
		wantErr string
		want    events.Profile
	}{
		{"non-bot ignores malformed e and p",
			event(0, `{"name":"alice"}`, nostr.Tag{"e", "x"}, nostr.Tag{"p", "y"}), "",
			events.Profile{Name: "alice", Metadata: map[string]any{"name": "alice"}}},
		{"non-bot content must still be an object",
			event(0, `"alice"`), `kind 0: content: not a JSON object`, events.Profile{}},
		{"trailing data after the object",
			event(0, `{"name":"a"} {}`, nostr.Tag{"bot"}), `kind 0: content: not a JSON object`, events.Profile{}},
		{"bot profile with bad owner", event(0, `{}`, nostr.Tag{"bot"}, nostr.Tag{"p", "npub1..."}),
			`kind 0: tag "p": not a 64-hex pubkey`, events.Profile{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := events.ParseProfile(tt.evt)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("got %v, want %s", err, tt.wantErr)
				}
				return
			}
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
