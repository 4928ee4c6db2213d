package events

import (
	"github.com/nbd-wtf/go-nostr"
)

// Lesson is a NIP-AE lesson (kind 4129), signed by an agent key and tied to
// the definition the agent runs.
type Lesson struct {
	ID        string
	PubKey    string
	CreatedAt nostr.Timestamp

	DefinitionID string // the single "e" tag: the kind-4199 event id
	Title        string
	Category     string
	Topics       []string // "t" tags
	Content      string
}

// validateLesson holds the kind-4129 rules.
var validateLesson = all(
	checkTagNames,
	checkDefinitionRef,
	required("title"),
)

// checkDefinitionRef: exactly one "e", and it is a 64-hex id.
func checkDefinitionRef(evt *nostr.Event) error {
	switch countTags(evt.Tags, "e") {
	case 0:
		return invalid(evt.Kind, "e", ErrMissingTag)
	case 1:
	default:
		return invalidBecause(evt.Kind, "e", ErrBadTag, reasonOneDefinition)
	}
	if !IsHex64(valueOf(evt.Tags, "e")) {
		return invalid(evt.Kind, "e", ErrBadID)
	}
	return nil
}

// ParseLesson validates a kind-4129 event and returns its typed view.
func ParseLesson(evt *nostr.Event) (*Lesson, error) {
	if err := checkKind(evt, KindLesson); err != nil {
		return nil, err
	}
	return &Lesson{
		ID: evt.ID, PubKey: evt.PubKey, CreatedAt: evt.CreatedAt,
		DefinitionID: valueOf(evt.Tags, "e"),
		Title:        valueOf(evt.Tags, "title"),
		Category:     valueOf(evt.Tags, "category"),
		Topics:       valuesOf(evt.Tags, "t"),
		Content:      evt.Content,
	}, nil
}

// Template returns the unsigned kind-4129 event for l (CreatedAt left to the caller).
func (l *Lesson) Template() nostr.Event {
	tags := nostr.Tags{{"title", l.Title}}
	tags = appendOpt(tags, "category", l.Category)
	tags = append(tags, nostr.Tag{"e", l.DefinitionID})
	tags = appendEach(tags, "t", l.Topics)
	return nostr.Event{Kind: KindLesson, Tags: tags, Content: l.Content}
}
