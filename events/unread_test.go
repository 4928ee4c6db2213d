package events_test

import (
	"slices"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/agentnode/agentnode/events"
)

// A definition's tags this package does not interpret are named, once
// each, so that people see them; the ones it reads are not.
func TestParseDefinition_namesUnreadTags(t *testing.T) {
	evt := &nostr.Event{Kind: events.KindDefinition, Tags: nostr.Tags{
		{"title", "Planner"}, {"skill", "a"}, {"phase", "plan"}, {"skill", "b"}, {"alt", "agent definition"}, {"tool", "x"},
	}}
	d, err := events.ParseDefinition(evt)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.Unread, []string{"skill", "phase"}; !slices.Equal(got, want) {
		t.Errorf("Unread = %v, want %v", got, want)
	}
}
