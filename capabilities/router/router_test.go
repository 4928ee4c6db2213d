package router

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentnode/agentnode/capabilities/acp"
)

const (
	noteID     = "did:nuwa:cap:note@1.0.0"
	weatherID  = "did:nuwa:cap:weather@2.1.0"
	todoID     = "did:nuwa:cap:todo@0.3.0"
	reporterID = "did:nuwa:cap:weatherreporter@1.0.0"
)

func installed() []Route {
	return []Route{
		{ID: noteID, Name: "Notes", Triggers: []acp.Trigger{{Type: "keyword", Value: "note"}, {Type: "regex", Value: `^remember\b`}}},
		{ID: weatherID, Name: "Weather", Triggers: []acp.Trigger{{Type: "regex", Value: `(?i)\b(weather|forecast)\b`}, {Type: "embedding", Value: "rain"}}},
		// todo also reacts to "note": install order makes note win.
		{ID: todoID, Name: "Todo", Triggers: []acp.Trigger{{Type: "keyword", Value: "to do"}, {Type: "keyword", Value: "NOTE"}}},
		// reachable by /switch only (no triggers); its display name is two words.
		{ID: reporterID, Name: "Weather Reporter"},
	}
}

// step is one message in a conversation and what the router must decide.
type step struct {
	msg   string
	want  Decision // Reply is compared by substring
	stack []string // the stack afterwards
}

func TestRouter_Route(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
	}{
		{"fallback", []step{
			{"hello there", Decision{Message: "hello there", Reason: "fallback"}, nil},
		}},
		{"keyword is whole-word and case-insensitive", []step{
			{"my notebook is full", Decision{Message: "my notebook is full", Reason: "fallback"}, nil},
			{"Take a NOTE: milk", Decision{Capability: noteID, Message: "Take a NOTE: milk", Reason: "trigger:note"}, []string{noteID}},
		}},
		{"regex trigger is case-sensitive unless the pattern says so", []step{
			{"Remember milk", Decision{Message: "Remember milk", Reason: "fallback"}, nil},
			{"Weather in Oslo?", Decision{Capability: weatherID, Message: "Weather in Oslo?", Reason: `trigger:(?i)\b(weather|forecast)\b`}, []string{weatherID}},
		}},
		{"multi-word keyword matches as a phrase", []step{
			{"what is left to do today", Decision{Capability: todoID, Message: "what is left to do today", Reason: "trigger:to do"}, []string{todoID}},
		}},
		{"embedding triggers never match", []step{
			{"rain", Decision{Message: "rain", Reason: "fallback"}, nil},
		}},
		{"top of stack keeps the conversation", []step{
			{"a note please", Decision{Capability: noteID, Message: "a note please", Reason: "trigger:note"}, []string{noteID}},
			{"about milk", Decision{Capability: noteID, Message: "about milk", Reason: "stack"}, []string{noteID}},
			{"another note", Decision{Capability: noteID, Message: "another note", Reason: "stack"}, []string{noteID}}, // todo ties: the top keeps it
		}},
		// NIP-7: "Router ... re-classifies, stack pops" (this step said
		// "stack" before the interop issue).
		{"a message that matches another capability better re-classifies", []step{
			{"a note please", Decision{Capability: noteID, Message: "a note please", Reason: "trigger:note"}, []string{noteID}},
			{"what's the weather", Decision{Capability: weatherID, Message: "what's the weather", Reason: `reclassify:(?i)\b(weather|forecast)\b`}, []string{weatherID}},
			{"a note of what to do", Decision{Capability: todoID, Message: "a note of what to do", Reason: "reclassify:to do"}, []string{todoID}},
		}},
		{"switch by name, name@version, id, display name", []step{
			{"/switch weather", Decision{Capability: weatherID, Reason: "switch", Reply: "Switched to Weather"}, []string{weatherID}},
			{"/switch note@1.0.0", Decision{Capability: noteID, Reason: "switch", Reply: "Switched to Notes"}, []string{weatherID, noteID}},
			{"/switch " + todoID, Decision{Capability: todoID, Reason: "switch", Reply: "Switched to Todo"}, []string{weatherID, noteID, todoID}},
			{"/SWITCH notes", Decision{Capability: noteID, Reason: "switch", Reply: "Switched to Notes"}, []string{weatherID, todoID, noteID}},
		}},
		{"switch with a message sends it on", []step{
			{"  /switch weather  is it cold?", Decision{Capability: weatherID, Message: "is it cold?", Reason: "switch"}, []string{weatherID}},
		}},
		{"switch takes a display name of several words", []step{
			{"/switch Weather Reporter", Decision{Capability: reporterID, Reason: "switch", Reply: "Switched to Weather Reporter"}, []string{reporterID}},
			{"/switch weather reporter is it cold?", Decision{Capability: reporterID, Message: "is it cold?", Reason: "switch"}, []string{reporterID}},
			{"/switch Weather is it cold?", Decision{Capability: weatherID, Message: "is it cold?", Reason: "switch"}, []string{reporterID, weatherID}},
		}},
		{"switch to an unknown capability is answered", []step{
			{"/switch calendar", Decision{Reason: "switch", Reply: `Unknown capability "calendar". Installed: note@1.0.0, weather@2.1.0, todo@0.3.0, weatherreporter@1.0.0.`}, nil},
			{"/switch", Decision{Reason: "switch", Reply: "Usage: /switch <capability>"}, nil},
		}},
		{"switch is a command only as the first word", []step{
			{"please /switch todo", Decision{Message: "please /switch todo", Reason: "fallback"}, nil},
			{"/switchtodo", Decision{Message: "/switchtodo", Reason: "fallback"}, nil},
		}},
		{"back pops", []step{
			{"/switch note", Decision{Capability: noteID, Reason: "switch", Reply: "Switched"}, []string{noteID}},
			{"/switch weather", Decision{Capability: weatherID, Reason: "switch", Reply: "Switched"}, []string{noteID, weatherID}},
			{"/back", Decision{Capability: noteID, Reason: "back", Reply: "Left Weather; back to Notes."}, []string{noteID}},
			{"/back", Decision{Reason: "back", Reply: "Left Notes; back to the agent."}, nil},
			{"/back", Decision{Reason: "back", Reply: "Nothing to go back from"}, nil},
		}},
		{"back with a message routes it on", []step{
			{"/switch weather", Decision{Capability: weatherID, Reason: "switch", Reply: "Switched"}, []string{weatherID}},
			{"/back take a note", Decision{Capability: noteID, Message: "take a note", Reason: "trigger:note"}, []string{noteID}},
			{"/back hi", Decision{Message: "hi", Reason: "fallback"}, nil},
			{"/back hi again", Decision{Message: "hi again", Reason: "fallback"}, nil},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New(installed())
			for i, s := range tt.steps {
				got := r.Route("c1", s.msg)
				if got.Capability != s.want.Capability || got.Message != s.want.Message || got.Reason != s.want.Reason ||
					!strings.Contains(got.Reply, s.want.Reply) || (s.want.Reply == "") != (got.Reply == "") {
					t.Errorf("step %d %q:\n got %+v\nwant %+v", i, s.msg, got, s.want)
				}
				if st := r.Stack("c1"); !slices.Equal(st, s.stack) {
					t.Errorf("step %d %q: stack %v, want %v", i, s.msg, st, s.stack)
				}
			}
		})
	}
}

func TestRouter_Done(t *testing.T) {
	r := New(installed())
	r.Route("c", "/switch note")
	r.Route("c", "/switch weather")
	if got := r.Done("c"); got != weatherID {
		t.Errorf("Done = %q, want %q", got, weatherID)
	}
	if d := r.Route("c", "is it raining"); d.Capability != noteID || d.Reason != "stack" {
		t.Errorf("after Done: %+v", d)
	}
	r.Done("c")
	if got := r.Done("c"); got != "" {
		t.Errorf("Done on empty stack = %q", got)
	}
}

func TestRouter_ConversationsAreSeparate(t *testing.T) {
	r := New(installed())
	r.Route("a", "/switch weather")
	if d := r.Route("b", "hello"); d.Capability != "" {
		t.Errorf("b routed to %q", d.Capability)
	}
	if st := r.Stack("a"); !slices.Equal(st, []string{weatherID}) {
		t.Errorf("a stack = %v", st)
	}
}

func TestRouter_SetInstalled(t *testing.T) {
	r := New(installed())
	r.Route("a", "/switch note")
	r.Route("a", "/switch weather")
	r.Route("b", "/switch weather")
	r.SetInstalled(installed()[:1]) // weather uninstalled
	if st := r.Stack("a"); !slices.Equal(st, []string{noteID}) {
		t.Errorf("a stack = %v, want [note]", st)
	}
	if st := r.Stack("b"); st != nil {
		t.Errorf("b stack = %v, want empty", st)
	}
	if d := r.Route("b", "weather today?"); d.Reason != "fallback" {
		t.Errorf("uninstalled trigger still routes: %+v", d)
	}
	if d := r.Route("b", "/switch weather"); !strings.Contains(d.Reply, "Unknown capability") {
		t.Errorf("switch to uninstalled: %+v", d)
	}
}

func TestRouter_BadTriggers(t *testing.T) {
	r := New([]Route{{ID: noteID, Triggers: []acp.Trigger{
		{Type: "regex", Value: "(unclosed"}, {Type: "keyword", Value: " "}, {Type: "telepathy", Value: "x"}, {Type: "keyword", Value: "ok"},
	}}})
	bad := r.BadTriggers()
	if len(bad) != 3 {
		t.Fatalf("BadTriggers = %v, want 3", bad)
	}
	var te *TriggerError
	if !errors.As(bad[0], &te) || te.Capability != noteID || !errors.Is(bad[1], ErrEmptyKeyword) || !errors.Is(bad[2], ErrUnknownTrigger) {
		t.Errorf("BadTriggers = %v", bad)
	}
	if d := r.Route("c", "ok then"); d.Capability != noteID {
		t.Errorf("the good trigger should still match: %+v", d)
	}
}

func TestRouter_StackDepthIsBounded(t *testing.T) {
	var routes []Route
	for i := range MaxDepth + 3 {
		routes = append(routes, Route{ID: fmt.Sprintf("did:nuwa:cap:c%d@1.0.0", i)})
	}
	r := New(routes)
	for i := range routes {
		r.Route("c", fmt.Sprintf("/switch c%d", i))
	}
	st := r.Stack("c")
	if len(st) != MaxDepth || st[len(st)-1] != routes[len(routes)-1].ID || st[0] != routes[3].ID {
		t.Errorf("stack = %v", st)
	}
}

func TestRouter_LRUEvictsLeastRecent(t *testing.T) {
	r := New(installed())
	r.convs = newLRU(3)
	for _, c := range []string{"a", "b", "c"} {
		r.Route(c, "/switch note")
	}
	r.Route("a", "still here") // a is now the most recent
	r.Route("d", "/switch note")
	if st := r.Stack("b"); st != nil {
		t.Errorf("b should be evicted, stack %v", st)
	}
	for _, c := range []string{"a", "c", "d"} {
		if st := r.Stack(c); len(st) != 1 {
			t.Errorf("%s stack = %v", c, st)
		}
	}
	if n := r.convs.len(); n != 3 {
		t.Errorf("%d conversations kept, want 3", n)
	}
}

// Many conversations routed concurrently end with the stacks a sequential
// replay of each conversation gives (run with -race).
func TestRouter_Concurrent(t *testing.T) {
	r := New(installed())
	const convs, rounds = 16, 200
	var wg sync.WaitGroup
	for c := range convs {
		wg.Go(func() {
			id := fmt.Sprint("conv-", c)
			for i := range rounds {
				switch i % 4 {
				case 0:
					r.Route(id, "/switch weather")
				case 1:
					r.Route(id, "take a note")
				case 2:
					r.Done(id)
				case 3:
					r.Stack(id)
				}
			}
		})
	}
	wg.Go(func() {
		for range rounds {
			r.SetInstalled(installed())
			r.BadTriggers()
		}
	})
	wg.Wait()
	for c := range convs {
		// each round of 4 pushes weather, keeps it (stack), then pops it.
		if st := r.Stack(fmt.Sprint("conv-", c)); st != nil {
			t.Errorf("conv-%d stack = %v, want empty", c, st)
		}
	}
}

func TestRouteOf(t *testing.T) {
	p := &acp.Package{Metadata: acp.Metadata{ID: noteID, Name: "Notes", Triggers: []acp.Trigger{{Type: "keyword", Value: "note"}}}}
	r := New([]Route{RouteOf(p)})
	if d := r.Route("c", "a note"); d.Capability != noteID {
		t.Errorf("decision %+v", d)
	}
}
