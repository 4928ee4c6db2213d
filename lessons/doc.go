// Package lessons decides which NIP-AE lessons (kind 4129) and lesson
// comments (kind 1111) an agent applies, and composes the agent's effective
// behaviour: definition + nudges + trusted lessons -> system prompt and tool
// set (DESIGN §2 and §3; docs/TRUST.md).
//
// A lesson or comment is applied only if its author is trusted for the agent
// by one of the rules of a Policy: self, owner, definition-author, sibling (an
// agent of the same definition whose owner link verifies both ways and whose
// owner is trusted), allowlist, follows (off by default). Every lesson seen
// is reported with the rule that admitted it or the reason it was refused; a
// kind 5 by the author retracts. Lessons enter the prompt as quoted,
// attributed data, never as instructions.
//
// The package does no I/O of its own: GatherLimited reads through a Querier (the
// embedded relay satisfies it), Evaluate and Compose are pure.
//
//	p, err := lessons.NewPolicy(lessons.Config{Allowlist: []string{"npub1..."}, FollowHop: true})
//	if err != nil { ... }
//	s := lessons.Subject{Agent: agentPK, Owner: ownerPK, Definition: def, Nudges: nudges}
//
//	ev, err := lessons.GatherLimited(ctx, store, s, lessons.DefaultLimits) // lessons, comments, deletions, profiles, claims, follows
//	eff := lessons.Compose(def, nudges, p.Evaluate(s, ev))
//	fmt.Println(eff.Prompt, eff.Tools)
//	for _, l := range eff.Lessons { fmt.Println(l.ID, l.Applied, l.Rule, l.Reason) }
package lessons
