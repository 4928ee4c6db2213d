package lessons

import (
	"slices"

	"github.com/agentnode/agentnode/events"
)

// CombineNudges returns the tool set an agent gets from its definition's
// tools and its nudges (DESIGN §2, NIP-AE kind 4201):
//
//   - if any nudge has only-tool tags, the set is the union of every nudge's
//     only-tools, and allow/deny are ignored;
//   - else the defaults, plus every allow-tool, minus every deny-tool: deny
//     wins over allow for the same tool, whichever nudge carries them.
//
// Order is kept (defaults first, then additions in nudge order), duplicates
// are dropped, nil nudges are skipped. The result is never nil.
func CombineNudges(defaultTools []string, nudges ...*events.Nudge) []string {
	if only := collect(nudges, func(n *events.Nudge) []string { return n.OnlyTools }); len(only) > 0 {
		return only
	}
	deny := collect(nudges, func(n *events.Nudge) []string { return n.DenyTools })
	allow := collect(nudges, func(n *events.Nudge) []string { return n.AllowTools })
	out := []string{}
	for _, tool := range append(slices.Clone(defaultTools), allow...) {
		if !slices.Contains(deny, tool) && !slices.Contains(out, tool) {
			out = append(out, tool)
		}
	}
	return out
}

// collect gathers one tool list from every non-nil nudge, in order, deduplicated.
func collect(nudges []*events.Nudge, list func(*events.Nudge) []string) []string {
	var out []string
	for _, n := range nudges {
		if n == nil {
			continue
		}
		for _, tool := range list(n) {
			if !slices.Contains(out, tool) {
				out = append(out, tool)
			}
		}
	}
	return out
}
