package events

import (
	"github.com/nbd-wtf/go-nostr"
)

// Lesson is a NIP-AE lesson (kind 4129), signed by an agent key. NIP-AE
// lists ["e", <definition id>] but does not require it: TENEX writes lessons
// tied to its project (["a", "31933:<pubkey>:<d>"]) or to nothing, and a
// lesson may name more than one definition. docs/INTEROP.md has the rules,
// docs/TRUST.md what the trust policy does with each shape.
type Lesson struct {
	ID        string
	PubKey    string
	CreatedAt nostr.Timestamp

	DefinitionID  string   // the first "e": the kind-4199 event id ("" when none)
	DefinitionIDs []string // every "e", in order (nil when none)
	Projects      []string // "a" coordinates (TENEX: its kind-31933 project)
	Title         string   // may be "": the content is the lesson
	Category      string
	Topics        []string // "t" tags
	Content       string
}

// Unbound reports whether l names no definition: it is tied to a project
// ("a") or to nothing, and only its own author applies it (docs/TRUST.md).
func (l *Lesson) Unbound() bool { return len(l.DefinitionIDs) == 0 }

// Names reports whether l names definition defID.
func (l *Lesson) Names(defID string) bool {
	for _, id := range l.DefinitionIDs {
		if id == defID {
			return true
		}
	}
	return false
}

// validateLesson holds the kind-4129 rules: every "e" is an event id (a
// reference that can name nothing is malformed), and a lesson says something.
var validateLesson = all(
	checkTagNames,
	eachValue("e", IsHex64, ErrBadID, ErrBadID.Error()),
	checkTitleOrContent,
)

// checkTitleOrContent refuses a lesson with neither a title nor content:
// it teaches nothing.
func checkTitleOrContent(evt *nostr.Event) error {
	if blank(valueOf(evt.Tags, "title")) && blank(evt.Content) {
		return invalidBecause(evt.Kind, "title", ErrMissingTag, reasonTitleOrContent)
	}
	return nil
}

// ParseLesson validates a kind-4129 event and returns its typed view.
func ParseLesson(evt *nostr.Event) (*Lesson, error) {
	if err := checkKind(evt, KindLesson); err != nil {
		return nil, err
	}
	defs := dedupe(valuesOf(evt.Tags, "e"))
	return &Lesson{
		ID: evt.ID, PubKey: evt.PubKey, CreatedAt: evt.CreatedAt,
		DefinitionID:  valueOf(evt.Tags, "e"),
		DefinitionIDs: defs,
		Projects:      valuesOf(evt.Tags, "a"),
		Title:         valueOf(evt.Tags, "title"),
		Category:      valueOf(evt.Tags, "category"),
		Topics:        valuesOf(evt.Tags, "t"),
		Content:       evt.Content,
	}, nil
}

// Template returns the unsigned kind-4129 event for l (CreatedAt left to the
// caller): the strict shape, title first and the definition as "e".
func (l *Lesson) Template() nostr.Event {
	tags := appendOpt(nostr.Tags{}, "title", l.Title)
	tags = appendOpt(tags, "category", l.Category)
	tags = appendOpt(tags, "e", l.DefinitionID)
	for _, id := range l.DefinitionIDs {
		if id != l.DefinitionID {
			tags = append(tags, nostr.Tag{"e", id})
		}
	}
	tags = appendEach(tags, "a", l.Projects)
	tags = appendEach(tags, "t", l.Topics)
	return nostr.Event{Kind: KindLesson, Tags: tags, Content: l.Content}
}
