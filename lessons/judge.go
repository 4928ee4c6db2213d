package lessons

import (
	"github.com/agentnode/agentnode/events"
)

// Decision is the outcome of the trust policy for one author (and, after
// retractions, for one lesson or comment): applied with the rule that
// admitted it, or refused with the reason.
type Decision struct {
	Applied bool
	Rule    Rule   // when applied
	Reason  string // when refused
}

func admitted(r Rule) Decision       { return Decision{Applied: true, Rule: r} }
func refused(reason string) Decision { return Decision{Reason: reason} }

// world is what the rules look at for one agent: who it is, its definition,
// and the profiles, claims and follows gathered for the authors in view.
type world struct {
	agent, owner     string
	defID, defAuthor string
	profiles         map[string]*events.Profile     // by pubkey, newest
	claims           map[string]*events.OwnerClaims // by owner pubkey, newest
	follows          map[string]bool                // the agent owner's kind 3 "p"s
}

// judge decides whether author is trusted for the agent in w. The rules are
// tried in order; the first enabled rule that admits the author wins. If only
// disabled rules would admit the author, the first of them is named.
func (p *Policy) judge(w *world, author string) Decision {
	var off Rule
	for _, r := range ruleOrder {
		if !p.admits(w, r, author) {
			continue
		}
		if p.on[r] {
			return admitted(r)
		}
		if off == "" {
			off = r
		}
	}
	if off != "" {
		return refused(ruleDisabled(off))
	}
	return refused(p.whyNot(w, author))
}

// admits reports whether rule r, were it on, would admit author.
func (p *Policy) admits(w *world, r Rule, author string) bool {
	switch r {
	case RuleSelf:
		return author == w.agent
	case RuleOwner:
		return author == w.owner && w.owner != ""
	case RuleDefinitionAuthor:
		return author == w.defAuthor && w.defAuthor != ""
	case RuleSibling:
		owner, verified := w.sibling(author)
		return verified && p.ownerTrusted(w, owner)
	case RuleAllowlist:
		return p.allow[author]
	case RuleFollows:
		return w.follows[author]
	}
	return false
}

// ownerTrusted reports whether a sibling's owner is trusted: the agent's own
// owner, or admitted by an enabled allowlist or follows rule.
func (p *Policy) ownerTrusted(w *world, owner string) bool {
	return owner == w.owner ||
		(p.on[RuleAllowlist] && p.allow[owner]) ||
		(p.on[RuleFollows] && w.follows[owner])
}

// whyNot explains a refusal that no rule (on or off) would lift.
func (p *Policy) whyNot(w *world, author string) string {
	prof := w.siblingProfile(author)
	if prof == nil {
		return ReasonStranger
	}
	owner, verified := w.sibling(author)
	switch {
	case verified:
		return ownerUntrusted(owner)
	case prof.Owner == "":
		return ReasonSiblingNoOwner
	default:
		return ReasonSiblingNotListed
	}
}

// siblingProfile is author's kind 0 when it names this definition and author
// is not the agent itself; else nil.
func (w *world) siblingProfile(author string) *events.Profile {
	prof := w.profiles[author]
	if prof == nil || author == w.agent || prof.DefinitionID != w.defID {
		return nil
	}
	return prof
}

// sibling reports author's owner and whether the owner link verifies both
// ways: its kind 0 names the owner, the owner's kind 14199 lists it.
func (w *world) sibling(author string) (owner string, verified bool) {
	prof := w.siblingProfile(author)
	if prof == nil || prof.Owner == "" {
		return "", false
	}
	o := events.CheckOwnership(author, prof, w.claims[prof.Owner])
	return o.Owner, o.Verified
}
