package agentd

import (
	"fmt"
	"slices"

	"github.com/agentnode/agentnode/events"
)

// Values of SenderPolicy.From.
const (
	SendersAnyone    = "anyone"    // everyone (the default)
	SendersOwner     = "owner"     // each agent's owner
	SendersAllowlist = "allowlist" // the owner and the pubkeys in Allow
)

// SenderPolicy says who may talk to an agent: over NIP-17 DMs (serve's
// "dm" section, docs/DM.md) or, running its capability tools, over kind
// 25910 (the "a2a" section, docs/BINDINGS.md). Where siblings count (a2a),
// agents whose owner link verifies to the agent's owner are admitted too.
// Others get no answer at all. Whom it admits and does not know (Knows)
// is a stranger, whose messages draw on the strangers' budget.
type SenderPolicy struct {
	From  string   `json:"from"`  // SendersAnyone ("" too), SendersOwner or SendersAllowlist
	Allow []string `json:"allow"` // npub or hex; hex once Check succeeded; known under any From (no strangers' budget)
}

// Check validates p (section names it in errors: "dm", "a2a"), defaults
// From to SendersAnyone and turns Allow into hex keys.
func (p *SenderPolicy) Check(section string) error {
	switch p.From {
	case "":
		p.From = SendersAnyone
	case SendersAnyone, SendersOwner, SendersAllowlist:
	default:
		return fmt.Errorf(`"%s.from" %q: want "anyone", "owner" or "allowlist"`, section, p.From)
	}
	for i, a := range p.Allow {
		pk, err := events.ParsePubKey(a)
		if err != nil {
			return fmt.Errorf(`"%s.allow" %q: %v`, section, a, err)
		}
		p.Allow[i] = pk
	}
	return nil
}

// Knows reports whether from is known to an agent whose owner is owner:
// the owner, a key in Allow (whatever From says) or, when siblingOwner is
// not nil, an agent whose verified owner link names the same owner. Known
// senders skip the strangers' budget (agentd/strangers); everyone else who
// Admits admits draws on it.
func (p SenderPolicy) Knows(owner, from string, siblingOwner func() string) bool {
	switch {
	case from == "":
		return false
	case from == owner, slices.Contains(p.Allow, from):
		return true
	case owner == "" || siblingOwner == nil:
		return false
	}
	return siblingOwner() == owner
}

// Admits reports whether from (hex) may talk to an agent whose owner is
// owner ("" when it has none: then only SendersAnyone admits). siblingOwner,
// when not nil, is the owner from's own verified owner link names ("" for
// none); it is asked only when the decision needs it (it reads the relay),
// and a sender of the same owner is admitted.
func (p SenderPolicy) Admits(owner, from string, siblingOwner func() string) bool {
	switch {
	case p.From == "" || p.From == SendersAnyone:
		return true
	case owner == "":
		return false
	case owner == from, p.From == SendersAllowlist && slices.Contains(p.Allow, from):
		return true
	case siblingOwner == nil:
		return false
	}
	return siblingOwner() == owner
}
