package events

import (
	"github.com/nbd-wtf/go-nostr"
)

// KindTeam is a TENEX team of agent definitions (addressable): a d
// slug, a title and one ["e", <4199 id>] per member, in order; the first
// member is the team's default agent.
const KindTeam = 34199

// Team is a kind-34199 team.
type Team struct {
	ID      string
	PubKey  string
	Slug    string     // "d"
	Title   string     // "title"
	Members []EventRef // the "e" tags in order; Members[0] is the default
}

// Template is an unsigned kind-34199 event of t.
func (t Team) Template() nostr.Event {
	tags := nostr.Tags{{"d", t.Slug}, {"title", t.Title}}
	for _, m := range t.Members {
		tags = append(tags, nostr.Tag{"e", m.ID, m.Relay})
	}
	return nostr.Event{Kind: KindTeam, Tags: tags}
}

// ParseTeam reads a kind-34199 event: it needs at least one member
// whose id is 64 hex.
func ParseTeam(evt *nostr.Event) (*Team, error) {
	if evt.Kind != KindTeam {
		return nil, invalidBecause(evt.Kind, "kind", ErrWrongKind, "want 34199")
	}
	t := &Team{ID: evt.ID, PubKey: evt.PubKey}
	for _, tag := range evt.Tags {
		if len(tag) < 2 {
			continue
		}
		switch tag[0] {
		case "d":
			t.Slug = tag[1]
		case "title":
			t.Title = tag[1]
		case "e":
			if !IsHex64(tag[1]) {
				return nil, invalidBecause(evt.Kind, "e", ErrBadID, "not a 64-hex event id")
			}
			ref := EventRef{ID: tag[1]}
			if len(tag) > 2 {
				ref.Relay = tag[2]
			}
			t.Members = append(t.Members, ref)
		}
	}
	if len(t.Members) == 0 {
		return nil, invalidBecause(evt.Kind, "e", ErrMissingTag, "a team needs at least one member definition")
	}
	return t, nil
}
