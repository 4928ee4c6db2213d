package llm

import "testing"

func TestAliases_RoundTrip(t *testing.T) {
	long := "x." + "abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghij"
	names := []string{"state.create", "state_create", "state-create", "a.b", "a_b", "a:b", "weather", long, long + "z"}
	al := newAliases(names)
	seen := map[string]string{}
	for _, n := range names {
		w := al.wire(n)
		if !validToolName.MatchString(w) {
			t.Errorf("wire(%q) = %q: not a valid function name", n, w)
		}
		if prev, dup := seen[w]; dup {
			t.Errorf("wire(%q) = wire(%q) = %q: collision", n, prev, w)
		}
		seen[w] = n
		if got := al.name(w); got != n {
			t.Errorf("name(wire(%q)) = %q", n, got)
		}
	}
}

func TestAliases_ValidNamesKeepThemselves(t *testing.T) {
	// state.create comes first but the real state_create keeps its name.
	al := newAliases([]string{"state.create", "state_create"})
	if got, want := al.wire("state_create"), "state_create"; got != want {
		t.Errorf("wire(state_create) = %q, want %q", got, want)
	}
	if got, want := al.wire("state.create"), "state_create_2"; got != want {
		t.Errorf("wire(state.create) = %q, want %q", got, want)
	}
}

func TestAliases_UnknownWireNamePassesThrough(t *testing.T) {
	al := newAliases([]string{"state.create"})
	if got := al.name("made_up"); got != "made_up" {
		t.Errorf("name(made_up) = %q", got)
	}
	if got, want := al.wire("not.offered"), "not_offered"; got != want {
		t.Errorf("wire(not.offered) = %q, want %q", got, want)
	}
}
