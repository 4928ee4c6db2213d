package events

import "github.com/nbd-wtf/go-nostr"

// KindSkill is a NIP-AD skill: instructions (content) an agent follows,
// a title, a description, an SPDX license and files (["e", <1063>,
// <relay>, "file"]).
const KindSkill = 4202

// Skill is a kind-4202 skill.
type Skill struct {
	ID          string
	PubKey      string
	Title       string // "title", else "name"
	Description string
	License     string // SPDX identifier
	Content     string // the instructions
	Files       []EventRef
}

// Template is an unsigned kind-4202 event of s.
func (s Skill) Template() nostr.Event {
	tags := nostr.Tags{{"title", s.Title}}
	if s.Description != "" {
		tags = append(tags, nostr.Tag{"description", s.Description})
	}
	if s.License != "" {
		tags = append(tags, nostr.Tag{"license", s.License})
	}
	tags = appendRefs(tags, s.Files, MarkerFile)
	return nostr.Event{Kind: KindSkill, Tags: tags, Content: s.Content}
}

// ParseSkill reads a kind-4202 event: it needs a title (or name) or
// content.
func ParseSkill(evt *nostr.Event) (*Skill, error) {
	if evt.Kind != KindSkill {
		return nil, invalidBecause(evt.Kind, "kind", ErrWrongKind, "want 4202")
	}
	s := &Skill{ID: evt.ID, PubKey: evt.PubKey, Content: evt.Content}
	for _, t := range evt.Tags {
		if len(t) < 2 {
			continue
		}
		switch t[0] {
		case "title":
			s.Title = t[1]
		case "name":
			if s.Title == "" {
				s.Title = t[1]
			}
		case "description":
			s.Description = t[1]
		case "license":
			s.License = t[1]
		case "e":
			if len(t) >= 4 && (t[3] == MarkerFile || t[3] == MarkerScript) && IsHex64(t[1]) {
				s.Files = append(s.Files, EventRef{ID: t[1], Relay: t[2], Marker: MarkerFile})
			}
		}
	}
	if s.Title == "" && s.Content == "" {
		return nil, invalidBecause(evt.Kind, "content", ErrBadContent, reasonTitleOrContent)
	}
	return s, nil
}
