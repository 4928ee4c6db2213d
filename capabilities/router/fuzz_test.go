package router

import (
	"slices"
	"strings"
	"testing"
)

// Any sequence of messages keeps the invariants: a stack holds installed
// ids, each once, at most MaxDepth; a Reply never comes with a message
// for the model; a decision's capability is the top of the stack or "".
func FuzzRouter(f *testing.F) {
	f.Add("/switch note\n/switch weather\n/back\nhello\n/back take a note")
	f.Add("weather?\n/back\n/back\n/switch\n/switch nope x")
	f.Add("  /SWITCH\tNotes  hi \n/back\t\tweather report")
	f.Fuzz(func(t *testing.T, script string) {
		r := New(installed())
		ids := []string{noteID, weatherID, todoID}
		for _, msg := range strings.Split(script, "\n") {
			d := r.Route("c", msg)
			st := r.Stack("c")
			if len(st) > MaxDepth || len(slices.Compact(slices.Sorted(slices.Values(st)))) != len(st) {
				t.Fatalf("after %q: stack %v", msg, st)
			}
			for _, id := range st {
				if !slices.Contains(ids, id) {
					t.Fatalf("after %q: stack holds %q", msg, id)
				}
			}
			top := ""
			if len(st) > 0 {
				top = st[len(st)-1]
			}
			if d.Capability != top {
				t.Fatalf("after %q: decision %+v, stack %v", msg, d, st)
			}
			if d.Reply != "" && d.Message != "" {
				t.Fatalf("after %q: reply and message both set: %+v", msg, d)
			}
		}
	})
}
