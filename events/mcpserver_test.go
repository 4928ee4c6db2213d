package events_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
)

func TestParseMCPServer(t *testing.T) {
	s := events.MCPServer{Name: "files", Description: "reads files", Command: []string{"npx", "-y", "@scope/server"}, Env: []string{"ROOT=/srv"}}
	tmpl := s.Template()
	got, err := events.ParseMCPServer(&tmpl)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "files" || got.Description != "reads files" || !slices.Equal(got.Command, s.Command) || !slices.Equal(got.Env, s.Env) {
		t.Fatalf("round trip: %+v", got)
	}

	evt := func(tags ...nostr.Tag) *nostr.Event { return &nostr.Event{Kind: events.KindMCPServer, Tags: tags} }
	split, err := events.ParseMCPServer(evt(nostr.Tag{"name", "x"}, nostr.Tag{"command", "uvx  mcp-server-git --repo ."}, nostr.Tag{"args", "--verbose"}))
	if err != nil || !slices.Equal(split.Command, []string{"uvx", "mcp-server-git", "--repo", ".", "--verbose"}) {
		t.Fatalf("one-value command and args: %v, %v", split, err)
	}

	long := strings.Repeat("a", events.MaxMCPArgBytes+1)
	many := append(nostr.Tag{"command"}, slices.Repeat([]string{"a"}, events.MaxMCPArgs+1)...)
	for _, c := range []struct {
		name string
		evt  *nostr.Event
		want error
	}{
		{"no name", evt(nostr.Tag{"command", "x"}), events.ErrMissingTag},
		{"no command", evt(nostr.Tag{"name", "x"}), events.ErrMissingTag},
		{"empty command", evt(nostr.Tag{"name", "x"}, nostr.Tag{"command", "  "}), events.ErrMissingTag},
		{"two commands", evt(nostr.Tag{"name", "x"}, nostr.Tag{"command", "a"}, nostr.Tag{"command", "b"}), events.ErrBadTag},
		{"too many args", evt(nostr.Tag{"name", "x"}, many), events.ErrBadValue},
		{"long arg", evt(nostr.Tag{"name", "x"}, nostr.Tag{"command", "a", long}), events.ErrBadValue},
		{"NUL", evt(nostr.Tag{"name", "x"}, nostr.Tag{"command", "a", "b\x00c"}), events.ErrBadValue},
		{"env PATH", evt(nostr.Tag{"name", "x"}, nostr.Tag{"command", "a"}, nostr.Tag{"env", "PATH", "/tmp"}), events.ErrBadValue},
		{"env LD_PRELOAD", evt(nostr.Tag{"name", "x"}, nostr.Tag{"command", "a"}, nostr.Tag{"env", "LD_PRELOAD", "/tmp/x.so"}), events.ErrBadValue},
		{"env bad name", evt(nostr.Tag{"name", "x"}, nostr.Tag{"command", "a"}, nostr.Tag{"env", "A=B", "c"}), events.ErrBadValue},
		{"wrong kind", &nostr.Event{Kind: 4202, Tags: nostr.Tags{{"name", "x"}, {"command", "a"}}}, events.ErrWrongKind},
	} {
		if _, err := events.ParseMCPServer(c.evt); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}
