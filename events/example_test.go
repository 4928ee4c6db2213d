package events_test

import (
	"fmt"

	"github.com/agentnode/agentnode/events"
	"github.com/nbd-wtf/go-nostr"
)

func ExampleValidate() {
	lesson := &events.Lesson{DefinitionID: "not-an-id", Title: "Prefer table tests"}
	evt := lesson.Template()
	fmt.Println(events.Validate(&evt))
	// Output: kind 4129: tag "e": not a 64-hex event id
}

func ExampleParseLesson() {
	sk := nostr.GeneratePrivateKey()
	l := &events.Lesson{DefinitionID: fmt.Sprintf("%064x", 4199), Title: "Run gofmt first", Topics: []string{"go"}}
	evt := l.Template()
	evt.CreatedAt = nostr.Now()
	_ = evt.Sign(sk)

	got, err := events.ParseLesson(&evt)
	fmt.Println(got.Title, got.Topics, err)
	// Output: Run gofmt first [go] <nil>
}

func ExampleCheckOwnership() {
	agent, owner := fmt.Sprintf("%064x", 1), fmt.Sprintf("%064x", 2)
	profile := &events.Profile{PubKey: agent, Bot: true, Owner: owner}
	claims := events.MergeClaims(&events.OwnerClaims{PubKey: owner}, []string{agent}, nil)

	o := events.CheckOwnership(agent, profile, claims)
	fmt.Println(o.Verified)
	o = events.CheckOwnership(agent, profile, nil)
	fmt.Println(o.Verified, o.Reason)
	// Output:
	// true
	// false no owner claims (kind 14199)
}
