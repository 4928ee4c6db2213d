package events

import (
	"slices"

	"github.com/nbd-wtf/go-nostr"
)

// OwnerClaims is a NIP-AE owner-claims event (kind 14199, replaceable), signed
// by the owner's own key and listing the owner's agents in "p" tags.
type OwnerClaims struct {
	ID        string
	PubKey    string // the owner
	CreatedAt nostr.Timestamp

	Agents  []string   // "p" values: agent pubkeys, order kept, deduplicated
	Content string     // kept as is
	Extra   nostr.Tags // every tag other than "p", preserved in order
	// PTags holds, per agent, the first "p" tag naming it exactly as it was
	// published (relay hint, petname and all), so a merge rewrites nothing.
	PTags map[string]nostr.Tag
}

// validateOwnerClaims holds the kind-14199 rules.
var validateOwnerClaims = all(
	checkTagNames,
	eachValue("p", IsHex64, ErrBadPubKey, ErrBadPubKey.Error()),
)

// ParseOwnerClaims validates a kind-14199 event and returns its typed view.
func ParseOwnerClaims(evt *nostr.Event) (*OwnerClaims, error) {
	if err := checkKind(evt, KindOwnerClaims); err != nil {
		return nil, err
	}
	o := &OwnerClaims{ID: evt.ID, PubKey: evt.PubKey, CreatedAt: evt.CreatedAt, Content: evt.Content}
	o.Agents = dedupe(valuesOf(evt.Tags, "p"))
	for _, t := range evt.Tags {
		if !isTag(t, "p") {
			o.Extra = append(o.Extra, slices.Clone(t))
		} else if _, seen := o.PTags[t[1]]; !seen && len(t) > 2 {
			if o.PTags == nil {
				o.PTags = map[string]nostr.Tag{}
			}
			o.PTags[t[1]] = slices.Clone(t)
		}
	}
	return o, nil
}

// Template returns the unsigned kind-14199 event for o: one "p" per agent
// (its original tag from PTags when there is one), then Extra (CreatedAt
// left to the caller; the owner signs it).
func (o *OwnerClaims) Template() nostr.Event {
	tags := nostr.Tags{}
	for _, agent := range o.Agents {
		if t, ok := o.PTags[agent]; ok {
			tags = append(tags, slices.Clone(t))
		} else {
			tags = append(tags, nostr.Tag{"p", agent})
		}
	}
	tags = append(tags, cloneTags(o.Extra)...)
	return nostr.Event{Kind: KindOwnerClaims, Tags: tags, Content: o.Content}
}

// Lists reports whether the claims list agent.
func (o *OwnerClaims) Lists(agent string) bool {
	return o != nil && slices.Contains(o.Agents, agent)
}

// MergeClaims builds the next claims from the latest stored ones (nil for
// none): every agent and every other tag it had is kept, even agents this node
// does not know; add is appended, then remove is taken out (remove wins).
// The result is deduplicated with a stable order and has no ID or CreatedAt.
func MergeClaims(latest *OwnerClaims, add, remove []string) *OwnerClaims {
	next := &OwnerClaims{}
	if latest != nil {
		next.PubKey, next.Content = latest.PubKey, latest.Content
		next.Agents = slices.Clone(latest.Agents)
		next.Extra = cloneTags(latest.Extra)
		next.PTags = latest.PTags // read-only: Template clones what it uses
	}
	next.Agents = without(dedupe(append(next.Agents, add...)), remove)
	return next
}

// without returns values minus every element of remove (nil if none is left).
func without(values, remove []string) []string {
	var out []string
	for _, v := range values {
		if !slices.Contains(remove, v) {
			out = append(out, v)
		}
	}
	return out
}

// cloneTags deep-copies tags (nil stays nil). It does not use nostr.Tag.Clone,
// which returns nil (go-nostr v0.52.3, tags.go:224).
func cloneTags(tags nostr.Tags) nostr.Tags {
	var out nostr.Tags
	for _, t := range tags {
		out = append(out, slices.Clone(t))
	}
	return out
}
