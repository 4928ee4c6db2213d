package lessons_test

import (
	"fmt"

	"github.com/agentnode/agentnode/events"
	"github.com/agentnode/agentnode/lessons"
	"github.com/nbd-wtf/go-nostr"
)

func ExampleCombineNudges() {
	defaults := []string{"read_file", "write_file", "search"}
	readOnly := &events.Nudge{Title: "read-only", DenyTools: []string{"write_file"}}
	shell := &events.Nudge{Title: "shell", AllowTools: []string{"shell", "write_file"}}
	fmt.Println(lessons.CombineNudges(defaults, readOnly, shell)) // deny wins over allow

	focus := &events.Nudge{Title: "focus", OnlyTools: []string{"search"}}
	fmt.Println(lessons.CombineNudges(defaults, readOnly, shell, focus)) // only fixes the set
	// Output:
	// [read_file search shell]
	// [search]
}

func ExamplePolicy_Evaluate() {
	sign := func(sk string, tmpl nostr.Event) *nostr.Event {
		tmpl.CreatedAt = 1700000000
		_ = tmpl.Sign(sk)
		return &tmpl
	}
	agentSK, ownerSK, strangerSK := nostr.GeneratePrivateKey(), nostr.GeneratePrivateKey(), nostr.GeneratePrivateKey()
	agent, _ := nostr.GetPublicKey(agentSK)
	owner, _ := nostr.GetPublicKey(ownerSK)
	def := &events.Definition{ID: fmt.Sprintf("%064x", 4199), PubKey: owner, Title: "Reviewer"}
	lesson := func(sk, title string) *nostr.Event {
		return sign(sk, (&events.Lesson{DefinitionID: def.ID, Title: title, Content: title}).Template())
	}
	ev := &lessons.Evidence{Lessons: []*nostr.Event{lesson(agentSK, "mine"), lesson(strangerSK, "theirs")}}

	s := lessons.Subject{Agent: agent, Owner: owner, Definition: def}
	for _, v := range lessons.DefaultPolicy().Evaluate(s, ev) {
		fmt.Printf("%s: applied=%v rule=%q reason=%q\n", v.Lesson.Title, v.Applied, v.Rule, v.Reason)
	}
	// Unordered output:
	// mine: applied=true rule="self" reason=""
	// theirs: applied=false rule="" reason="stranger: no rule admits author"
}
