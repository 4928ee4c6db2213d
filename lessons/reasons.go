package lessons

import (
	"fmt"

	"github.com/nbd-wtf/go-nostr/nip19"
)

// Refusal reasons. They are shown to people (`agent show --effective`) and
// are stable; docs/TRUST.md lists every one and a test keeps them in step.
const (
	ReasonStranger         = "stranger: no rule admits author"
	ReasonRetracted        = "retracted by its author (kind 5)"
	ReasonSiblingNotListed = "author is a sibling agent but its owner link is not verified (owner does not list it)"
	ReasonSiblingNoOwner   = "author is a sibling agent but its owner link is not verified (its profile names no owner)"
	ReasonLessonRefused    = "its lesson is not applied"
	ReasonUnbound          = "names no definition (project or free lesson): only the agent that wrote it applies it"
	reasonOwnerUntrusted   = "author's owner %s is not trusted"
	reasonRuleDisabled     = "rule %s is disabled"
	reasonInvalid          = "invalid event: %v"
)

// ownerUntrusted is the reason for a verified sibling whose owner no rule trusts.
func ownerUntrusted(owner string) string { return fmt.Sprintf(reasonOwnerUntrusted, npub(owner)) }

// ruleDisabled is the reason when only a switched-off rule would admit the author.
func ruleDisabled(r Rule) string { return fmt.Sprintf(reasonRuleDisabled, r) }

// invalidEvent is the reason for an event that does not parse.
func invalidEvent(err error) string { return fmt.Sprintf(reasonInvalid, err) }

// npub renders a 64-hex pubkey as npub1…, or returns it unchanged if it cannot.
func npub(pubkey string) string {
	s, err := nip19.EncodePublicKey(pubkey)
	if err != nil {
		return pubkey
	}
	return s
}
