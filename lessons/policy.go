package lessons

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agentnode/agentnode/events"
)

// Rule names one way an author can be trusted for an agent. The names are
// stable: they appear in configs, in Effective output and in the prompt.
type Rule string

// The trust rules, in the order they are tried (the first enabled rule that
// admits an author is the one reported).
const (
	RuleSelf             Rule = "self"              // the agent itself
	RuleOwner            Rule = "owner"             // the agent's owner
	RuleDefinitionAuthor Rule = "definition-author" // the pubkey that signed the definition
	RuleSibling          Rule = "sibling"           // a verified agent of the same definition with a trusted owner
	RuleAllowlist        Rule = "allowlist"         // a configured pubkey
	RuleFollows          Rule = "follows"           // followed by the owner (kind 3, one hop)
)

// ruleOrder is the order in which rules are tried.
var ruleOrder = []Rule{RuleSelf, RuleOwner, RuleDefinitionAuthor, RuleSibling, RuleAllowlist, RuleFollows}

// defaultRules are on in a policy of a zero Config; follows is off.
var defaultRules = []Rule{RuleSelf, RuleOwner, RuleDefinitionAuthor, RuleSibling, RuleAllowlist}

// Config is the trust policy as a caller reads it from a config file or
// flags; this package reads no files. Keys (see docs/TRUST.md):
//
//	enable     rules to switch on, added to the defaults (e.g. ["follows"])
//	disable    rules to switch off; disable wins over enable
//	allowlist  npub, nprofile or 64-hex pubkeys trusted by the allowlist rule
//	follow_hop true is the same as listing "follows" in enable
type Config struct {
	Enable    []string `json:"enable,omitempty" yaml:"enable,omitempty"`
	Disable   []string `json:"disable,omitempty" yaml:"disable,omitempty"`
	Allowlist []string `json:"allowlist,omitempty" yaml:"allowlist,omitempty"`
	FollowHop bool     `json:"follow_hop,omitempty" yaml:"follow_hop,omitempty"`
}

// Policy decides whose lessons and comments an agent applies. It is
// immutable once built and safe for concurrent use.
type Policy struct {
	on    map[Rule]bool
	allow map[string]bool // 64-hex pubkeys
}

// NewPolicy builds a policy from cfg on top of the defaults. Unknown rule
// names wrap ErrUnknownRule; bad allowlist entries wrap ErrBadAllowlist.
func NewPolicy(cfg Config) (*Policy, error) {
	p := &Policy{on: map[Rule]bool{}, allow: map[string]bool{}}
	for _, r := range defaultRules {
		p.on[r] = true
	}
	p.on[RuleFollows] = cfg.FollowHop
	if err := p.switchRules(cfg.Enable, true); err != nil {
		return nil, err
	}
	if err := p.switchRules(cfg.Disable, false); err != nil {
		return nil, err
	}
	return p, p.addAllowlist(cfg.Allowlist)
}

// switchRules turns the named rules on or off.
func (p *Policy) switchRules(names []string, on bool) error {
	for _, name := range names {
		r := Rule(strings.TrimSpace(name))
		if !slices.Contains(ruleOrder, r) {
			return fmt.Errorf("lessons: %w: %q (known: %s)", ErrUnknownRule, name, ruleList(ruleOrder))
		}
		p.on[r] = on
	}
	return nil
}

// addAllowlist parses each entry as a public key.
func (p *Policy) addAllowlist(entries []string) error {
	for _, e := range entries {
		pk, err := events.ParsePubKey(e)
		if err != nil {
			return fmt.Errorf("lessons: %w: %q", ErrBadAllowlist, e)
		}
		p.allow[pk] = true
	}
	return nil
}

// Enabled reports whether rule r is on.
func (p *Policy) Enabled(r Rule) bool { return p.on[r] }

// Allowlisted reports whether pubkey (64-hex) is on the allowlist.
func (p *Policy) Allowlisted(pubkey string) bool { return p.allow[pubkey] }

// EnabledRules lists the rules that are on, in the order they are tried.
func (p *Policy) EnabledRules() []Rule {
	var out []Rule
	for _, r := range ruleOrder {
		if p.on[r] {
			out = append(out, r)
		}
	}
	return out
}

// Config returns a Config that rebuilds p: every rule that is off is listed
// in disable, follows in enable when it is on, the allowlist as 64-hex.
func (p *Policy) Config() Config {
	var cfg Config
	for _, r := range ruleOrder {
		switch {
		case !p.on[r] && r != RuleFollows:
			cfg.Disable = append(cfg.Disable, string(r))
		case p.on[r] && r == RuleFollows:
			cfg.Enable = append(cfg.Enable, string(r))
		}
	}
	cfg.Allowlist = slices.Sorted(maps.Keys(p.allow))
	return cfg
}

// Fingerprint identifies the policy's behaviour: equal fingerprints decide alike.
func (p *Policy) Fingerprint() string {
	return "rules=" + ruleList(p.EnabledRules()) + ";allow=" + strings.Join(slices.Sorted(maps.Keys(p.allow)), ",")
}

// String is a one-line summary for logs and `agent show`.
func (p *Policy) String() string {
	return fmt.Sprintf("rules: %s; allowlist: %d pubkeys", ruleList(p.EnabledRules()), len(p.allow))
}

func ruleList(rules []Rule) string {
	names := make([]string, len(rules))
	for i, r := range rules {
		names[i] = string(r)
	}
	return strings.Join(names, ",")
}
