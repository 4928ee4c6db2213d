package lessons_test

import (
	"slices"
	"testing"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/lessons"
)

// nudge builds a nudge from "only", "allow" and "deny" tool lists.
func nudge(only, allow, deny []string) *events.Nudge {
	return &events.Nudge{Title: "n", OnlyTools: only, AllowTools: allow, DenyTools: deny}
}

func tools(names ...string) []string { return names }

func TestCombineNudges(t *testing.T) {
	defaults := tools("read", "write", "search")
	cases := []struct {
		name   string
		nudges []*events.Nudge
		want   []string
	}{
		{"no nudges: defaults", nil, tools("read", "write", "search")},
		{"nil nudge skipped", []*events.Nudge{nil}, tools("read", "write", "search")},
		{"content-only nudge", []*events.Nudge{{Content: "be brief"}}, tools("read", "write", "search")},
		{"allow adds", []*events.Nudge{nudge(nil, tools("shell"), nil)}, tools("read", "write", "search", "shell")},
		{"allow of a default is a no-op", []*events.Nudge{nudge(nil, tools("read"), nil)}, tools("read", "write", "search")},
		{"deny removes", []*events.Nudge{nudge(nil, nil, tools("write"))}, tools("read", "search")},
		{"deny of an unknown tool is a no-op", []*events.Nudge{nudge(nil, nil, tools("shell"))}, tools("read", "write", "search")},
		{"allow and deny in one nudge", []*events.Nudge{nudge(nil, tools("shell"), tools("write"))}, tools("read", "search", "shell")},
		{"deny wins over allow, same nudge", []*events.Nudge{nudge(nil, tools("shell"), tools("shell"))}, tools("read", "write", "search")},
		{"deny wins over allow, allow later", []*events.Nudge{nudge(nil, nil, tools("shell")), nudge(nil, tools("shell"), nil)}, tools("read", "write", "search")},
		{"deny wins over allow, deny later", []*events.Nudge{nudge(nil, tools("shell"), nil), nudge(nil, nil, tools("shell"))}, tools("read", "write", "search")},
		{"deny of a default wins over a re-allow", []*events.Nudge{nudge(nil, nil, tools("read")), nudge(nil, tools("read"), nil)}, tools("write", "search")},
		{"allows union across nudges", []*events.Nudge{nudge(nil, tools("shell"), nil), nudge(nil, tools("fetch", "shell"), nil)}, tools("read", "write", "search", "shell", "fetch")},
		{"denies union across nudges", []*events.Nudge{nudge(nil, nil, tools("read")), nudge(nil, nil, tools("search"))}, tools("write")},
		{"only fixes the set", []*events.Nudge{nudge(tools("search"), nil, nil)}, tools("search")},
		{"only may name a non-default tool", []*events.Nudge{nudge(tools("shell"), nil, nil)}, tools("shell")},
		{"only ignores allow and deny in its nudge", []*events.Nudge{nudge(tools("search"), tools("shell"), tools("search"))}, tools("search")},
		{"only ignores allow and deny in other nudges", []*events.Nudge{nudge(nil, tools("shell"), tools("search")), nudge(tools("search"), nil, nil)}, tools("search")},
		{"only-tools union across nudges", []*events.Nudge{nudge(tools("search"), nil, nil), nudge(tools("read", "search"), nil, nil)}, tools("search", "read")},
		{"one only among allow/deny nudges", []*events.Nudge{nudge(nil, tools("shell"), nil), nudge(tools("read"), nil, nil), nudge(nil, nil, tools("read"))}, tools("read")},
		{"everything denied", []*events.Nudge{nudge(nil, nil, tools("read", "write", "search"))}, tools()},
		{"duplicates collapse", []*events.Nudge{nudge(nil, tools("shell", "shell"), nil), nudge(nil, tools("shell"), nil)}, tools("read", "write", "search", "shell")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := lessons.CombineNudges(defaults, tc.nudges...)
			if !slices.Equal(got, tc.want) || got == nil {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCombineNudges_doesNotModifyDefaults(t *testing.T) {
	defaults := make([]string, 2, 8)
	copy(defaults, tools("read", "write"))
	lessons.CombineNudges(defaults, nudge(nil, tools("shell"), tools("read")))
	if !slices.Equal(defaults, tools("read", "write")) || slices.Contains(defaults[:3], "shell") {
		t.Errorf("defaults changed: %q", defaults[:3])
	}
}
