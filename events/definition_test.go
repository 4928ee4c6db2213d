package events_test

import (
	"reflect"
	"testing"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/internal/testkit"
	"github.com/nbd-wtf/go-nostr"
)

func TestDefinition_RoundTrip(t *testing.T) {
	kp := testkit.NewKey(t)
	sk, pk := kp.SK, kp.PK
	tests := []struct {
		name string
		def  events.Definition
		want events.Definition // zero: same as def, plus ID/PubKey/CreatedAt
	}{
		{name: "original shape", def: events.Definition{
			Title: "Code Reviewer", Role: "Senior Go reviewer, terse", Instructions: "Review diffs.",
			UseCriteria: "When a PR needs review", Description: "Reviews Go code",
			Tools: []string{"read_file", "grep"}, Version: "3", Image: "https://example.com/a.png",
		}},
		{name: "newer shape", def: events.Definition{
			Slug: "code-reviewer", Title: "Code Reviewer", Version: "1.2",
			Content: "# Code Reviewer\n\nYou review *Go* code.",
			Files:   []events.EventRef{{ID: hexID(1), Relay: "wss://relay.example.com", Marker: events.MarkerFile}},
			Forks:   []events.EventRef{{ID: hexID(2), Marker: events.MarkerFork}},
			Refs:    []events.EventRef{{ID: hexID(3)}},
		}},
		{name: "version defaults to 1",
			def:  events.Definition{Title: "Minimal"},
			want: events.Definition{Title: "Minimal", Version: "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evt := signed(t, sk, tt.def.Template())
			got, err := events.ParseDefinition(evt)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if reflect.ValueOf(want).IsZero() {
				want = tt.def
			}
			want.ID, want.PubKey, want.CreatedAt = evt.ID, pk, testTime
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("got  %+v\nwant %+v", *got, want)
			}
		})
	}
}

func TestParseDefinition_Shapes(t *testing.T) {
	old := event(events.KindDefinition, "",
		nostr.Tag{"title", "Writer"}, nostr.Tag{"title", "ignored second title"},
		nostr.Tag{"tool", "web_search"}, nostr.Tag{"tool", "fetch"})
	got, err := events.ParseDefinition(old)
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "Writer" || got.Version != "1" || len(got.Tools) != 2 || got.Slug != "" {
		t.Errorf("old shape parsed as %+v", got)
	}

	newer := event(events.KindDefinition, "# Writer",
		nostr.Tag{"d", "writer"}, nostr.Tag{"title", "Writer"}, nostr.Tag{"ver", "2"},
		nostr.Tag{"e", hexID(9), "", "file"}, nostr.Tag{"e", hexID(8), "wss://r.example", "fork"})
	got, err = events.ParseDefinition(newer)
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := []events.EventRef{{ID: hexID(9), Marker: "file"}}
	wantForks := []events.EventRef{{ID: hexID(8), Relay: "wss://r.example", Marker: "fork"}}
	if got.Slug != "writer" || got.Content != "# Writer" || !reflect.DeepEqual(got.Files, wantFiles) || !reflect.DeepEqual(got.Forks, wantForks) {
		t.Errorf("newer shape parsed as %+v", got)
	}
}

func TestParseDefinition_WrongKind(t *testing.T) {
	_, err := events.ParseDefinition(event(events.KindNudge, "x", nostr.Tag{"title", "t"}))
	if err == nil || err.Error() != `kind 4201: kind: want 4199` {
		t.Fatalf("got %v", err)
	}
	if _, err := events.ParseDefinition(nil); err != events.ErrNilEvent {
		t.Fatalf("nil: got %v", err)
	}
}

func TestDefinition_Key(t *testing.T) {
	tests := []struct {
		def  events.Definition
		want string
	}{
		{events.Definition{PubKey: "pk", Title: "Writer"}, "pk:Writer"},
		{events.Definition{PubKey: "pk", Title: "Writer", Slug: "writer"}, "pk:writer"},
	}
	for _, tt := range tests {
		if got := tt.def.Key(); got != tt.want {
			t.Errorf("Key() = %q, want %q", got, tt.want)
		}
	}
}

func TestLatestDefinitions(t *testing.T) {
	def := func(id, pk, slug, title, ver string, at nostr.Timestamp) *events.Definition {
		return &events.Definition{ID: id, PubKey: pk, Slug: slug, Title: title, Version: ver, CreatedAt: at}
	}
	tests := []struct {
		name string
		in   []*events.Definition
		want []string // ids, in key order
	}{
		{"newest created_at wins over higher ver",
			[]*events.Definition{def("a", "p", "", "W", "9", 100), def("b", "p", "", "W", "1", 200)}, []string{"b"}},
		{"old shape keyed by title, new by slug",
			[]*events.Definition{def("a", "p", "", "Writer", "1", 100), def("b", "p", "writer", "Writer", "1", 200)},
			[]string{"a", "b"}},
		{"slug groups across renamed titles",
			[]*events.Definition{def("a", "p", "w", "Writer", "1", 100), def("b", "p", "w", "Writer Pro", "2", 200)}, []string{"b"}},
		{"same title, different authors",
			[]*events.Definition{def("a", "p2", "", "W", "1", 100), def("b", "p1", "", "W", "1", 100)}, []string{"b", "a"}},
		{"tie: numeric ver, 10 beats 2",
			[]*events.Definition{def("a", "p", "", "W", "10", 100), def("b", "p", "", "W", "2", 100)}, []string{"a"}},
		{"tie: dotted ver, 1.10 beats 1.9",
			[]*events.Definition{def("a", "p", "", "W", "1.9", 100), def("b", "p", "", "W", "1.10", 100)}, []string{"b"}},
		{"tie: numeric beats non-numeric",
			[]*events.Definition{def("a", "p", "", "W", "beta", 100), def("b", "p", "", "W", "1", 100)}, []string{"b"}},
		{"tie: lexical ver",
			[]*events.Definition{def("a", "p", "", "W", "alpha", 100), def("b", "p", "", "W", "beta", 100)}, []string{"b"}},
		{"tie: equal numbers, then lexical (1.0 > 1)",
			[]*events.Definition{def("a", "p", "", "W", "1.0", 100), def("b", "p", "", "W", "1", 100)}, []string{"a"}},
		{"tie: lowest id",
			[]*events.Definition{def("b", "p", "", "W", "1", 100), def("a", "p", "", "W", "1", 100)}, []string{"a"}},
		{"nil skipped, empty ver counts as 1",
			[]*events.Definition{nil, def("a", "p", "", "W", "", 100), def("b", "p", "", "W", "2", 100)}, []string{"b"}},
		{"empty", nil, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := []string{}
			for _, d := range events.LatestDefinitions(tt.in) {
				got = append(got, d.ID)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
