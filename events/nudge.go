package events

import (
	"github.com/nbd-wtf/go-nostr"
)

// Nudge is a NIP-AE nudge (kind 4201): a behavioural modifier in Content and
// tool-set changes. OnlyTools, when any, fixes the tool set and AllowTools /
// DenyTools are then ignored; composing nudges is the lessons package's job.
type Nudge struct {
	ID        string
	PubKey    string
	CreatedAt nostr.Timestamp

	Title      string
	OnlyTools  []string // "only-tool"
	AllowTools []string // "allow-tool"
	DenyTools  []string // "deny-tool"
	Content    string
}

// validateNudge holds the kind-4201 rules.
var validateNudge = all(
	checkTagNames,
	nonEmpty("only-tool"),
	nonEmpty("allow-tool"),
	nonEmpty("deny-tool"),
	checkNudgeSays,
)

// checkNudgeSays refuses a nudge that changes nothing: no title (or TENEX's
// "name"), no content and no tool tag. A nudge of tool tags alone is legal:
// NIP-AE says nudges modify behaviour "and/or" tool availability.
func checkNudgeSays(evt *nostr.Event) error {
	for _, name := range []string{"only-tool", "allow-tool", "deny-tool"} {
		if firstTag(evt.Tags, name) != nil {
			return nil
		}
	}
	if blank(nudgeTitle(evt.Tags)) && blank(evt.Content) {
		return invalidBecause(evt.Kind, "title", ErrMissingTag, reasonNudgeEmpty)
	}
	return nil
}

// nudgeTitle is the "title" tag, else TENEX's "name".
func nudgeTitle(tags nostr.Tags) string {
	if v := valueOf(tags, "title"); !blank(v) {
		return v
	}
	return valueOf(tags, "name")
}

// ParseNudge validates a kind-4201 event and returns its typed view.
func ParseNudge(evt *nostr.Event) (*Nudge, error) {
	if err := checkKind(evt, KindNudge); err != nil {
		return nil, err
	}
	return &Nudge{
		ID: evt.ID, PubKey: evt.PubKey, CreatedAt: evt.CreatedAt,
		Title:      nudgeTitle(evt.Tags),
		OnlyTools:  valuesOf(evt.Tags, "only-tool"),
		AllowTools: valuesOf(evt.Tags, "allow-tool"),
		DenyTools:  valuesOf(evt.Tags, "deny-tool"),
		Content:    evt.Content,
	}, nil
}

// Template returns the unsigned kind-4201 event for n (CreatedAt left to the caller).
func (n *Nudge) Template() nostr.Event {
	tags := appendOpt(nostr.Tags{}, "title", n.Title)
	tags = appendEach(tags, "only-tool", n.OnlyTools)
	tags = appendEach(tags, "allow-tool", n.AllowTools)
	tags = appendEach(tags, "deny-tool", n.DenyTools)
	return nostr.Event{Kind: KindNudge, Tags: tags, Content: n.Content}
}
