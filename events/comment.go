package events

import (
	"cmp"
	"strconv"

	"github.com/nbd-wtf/go-nostr"
)

// Comment is a NIP-22 comment (kind 1111) on a lesson, or a reply to such a
// comment. ParseComment is lenient about where the root comes from; Template
// always writes the strict NIP-22 shape.
type Comment struct {
	ID        string
	PubKey    string
	CreatedAt nostr.Timestamp

	RootID     string // the lesson
	RootAuthor string
	RootKind   int // declared: "K" (or "k" of a top-level comment); 0 when undeclared

	ParentID     string // the lesson itself, or the comment replied to
	ParentAuthor string
	ParentKind   int

	Content string
}

// validateComment holds the kind-1111 rules. Only comments that claim a
// lesson root (or a lesson parent) are checked in depth: other NIP-22
// comments are legal and pass once their kinds and root kind are sane.
// A comment without "K" (older clients: NIP-10 marked "e" root/reply, or
// "E" alone) is accepted: its root kind is the kind of the root it names,
// resolved by whoever reads it (RootKindOf, lessons' folding, the relay's
// policies.RejectCommentRootMismatch).
var validateComment = all(
	checkTagNames,
	eachValue("K", isKind, ErrBadValue, reasonKindNumber),
	eachValue("k", isKind, ErrBadValue, reasonKindNumber),
	checkRootKind,
	checkLessonCommentRefs,
)

// checkRootKind: a comment whose parent is a lesson and that declares a
// root kind must declare a lesson root (a lesson is only ever a root).
func checkRootKind(evt *nostr.Event) error {
	rootKind, hasRootKind := kindOf(evt.Tags, "K")
	parentKind, hasParentKind := kindOf(evt.Tags, "k")
	if hasRootKind && hasParentKind && parentKind == KindLesson && rootKind != KindLesson {
		return invalidBecause(evt.Kind, "K", ErrBadValue, reasonLessonRootKind)
	}
	return nil
}

// checkLessonCommentRefs applies checkCommentRefs to lesson comments only.
func checkLessonCommentRefs(evt *nostr.Event) error {
	if !IsLessonComment(evt) {
		return nil
	}
	return checkCommentRefs(evt)
}

// checkCommentRefs: E/e are event ids, P/p pubkeys, and a root is referenced.
var checkCommentRefs = all(
	eachValue("E", IsHex64, ErrBadID, ErrBadID.Error()),
	eachValue("e", IsHex64, ErrBadID, ErrBadID.Error()),
	eachValue("P", IsHex64, ErrBadPubKey, ErrBadPubKey.Error()),
	eachValue("p", IsHex64, ErrBadPubKey, ErrBadPubKey.Error()),
	requireRootRef,
)

// requireRootRef refuses a comment with neither "E" nor "e".
func requireRootRef(evt *nostr.Event) error {
	if firstTag(evt.Tags, "E") == nil && firstTag(evt.Tags, "e") == nil {
		return invalidBecause(evt.Kind, "E", ErrMissingTag, reasonMissingRoot)
	}
	return nil
}

// IsLessonComment reports whether evt is a kind-1111 comment that declares
// a lesson root: "K" = 4129, or no "K" and "k" = 4129 (a top-level comment
// whose parent, hence root, is a lesson).
func IsLessonComment(evt *nostr.Event) bool {
	if evt == nil || evt.Kind != KindComment {
		return false
	}
	if k, ok := kindOf(evt.Tags, "K"); ok {
		return k == KindLesson
	}
	k, ok := kindOf(evt.Tags, "k")
	return ok && k == KindLesson
}

// RootRef returns the id of the root a kind-1111 comment names, leniently:
// "E", else an "e" marked "root", else the first "e" ("" when none).
func RootRef(evt *nostr.Event) string {
	t := firstTag(evt.Tags, "E")
	if t == nil {
		t = orTag(markedTag(evt.Tags, "e", "root"), firstTag(evt.Tags, "e"))
	}
	return tagAt(t, 1)
}

// DeclaredRootKind is the root kind a kind-1111 comment declares: "K",
// else "k" when the parent is the root (no other "e" than the root). ok is
// false when it declares none.
func DeclaredRootKind(evt *nostr.Event) (kind int, ok bool) {
	if k, ok := kindOf(evt.Tags, "K"); ok {
		return k, true
	}
	if firstTag(evt.Tags, "E") == nil && countTags(evt.Tags, "e") == 1 {
		return kindOf(evt.Tags, "k")
	}
	return 0, false
}

// ParseComment validates a kind-1111 event and returns its typed view. The
// root id comes from "E", else an "e" marked "root", else the first "e"; the
// parent from an "e" marked "reply", else the last "e", else the root. It does
// not require the root to be a lesson: check RootKind or IsLessonComment.
func ParseComment(evt *nostr.Event) (*Comment, error) {
	if err := checkKind(evt, KindComment); err != nil {
		return nil, err
	}
	// checkKind's Validate already ran checkCommentRefs on lesson comments.
	if !IsLessonComment(evt) {
		if err := checkCommentRefs(evt); err != nil {
			return nil, err
		}
	}
	c := &Comment{ID: evt.ID, PubKey: evt.PubKey, CreatedAt: evt.CreatedAt, Content: evt.Content}
	c.RootKind, _ = DeclaredRootKind(evt)
	c.setRoot(evt.Tags)
	c.setParent(evt.Tags)
	return c, nil
}

// setRoot fills RootID and RootAuthor from the lenient root reference.
func (c *Comment) setRoot(tags nostr.Tags) {
	t := firstTag(tags, "E")
	if t == nil {
		t = orTag(markedTag(tags, "e", "root"), firstTag(tags, "e"))
	}
	c.RootID = tagAt(t, 1)
	c.RootAuthor = cmp.Or(valueOf(tags, "P"), pubkeyIn(t))
}

// setParent fills the Parent fields; with no parent reference the root is the parent.
func (c *Comment) setParent(tags nostr.Tags) {
	t := orTag(markedTag(tags, "e", "reply"), lastTag(tags, "e"))
	c.ParentID = cmp.Or(tagAt(t, 1), c.RootID)
	c.ParentAuthor = cmp.Or(valueOf(tags, "p"), pubkeyIn(t))
	kind, ok := kindOf(tags, "k")
	switch {
	case ok:
		c.ParentKind = kind
	case c.ParentID == c.RootID:
		c.ParentKind = c.RootKind
	default:
		c.ParentKind = KindComment
	}
	if c.ParentAuthor == "" && c.ParentID == c.RootID {
		c.ParentAuthor = c.RootAuthor
	}
}

// markedTag returns the first tag named name whose marker (t[3]) is marker.
func markedTag(tags nostr.Tags, name, marker string) nostr.Tag {
	for _, t := range tags {
		if isTag(t, name) && tagAt(t, 3) == marker {
			return t
		}
	}
	return nil
}

// orTag returns a unless it is nil, else b.
func orTag(a, b nostr.Tag) nostr.Tag {
	if a != nil {
		return a
	}
	return b
}

// lastTag returns the last tag named name, or nil.
func lastTag(tags nostr.Tags, name string) nostr.Tag {
	for i := len(tags) - 1; i >= 0; i-- {
		if isTag(tags[i], name) {
			return tags[i]
		}
	}
	return nil
}

// pubkeyIn returns the author hint of an event reference: t[3] (NIP-22) or
// t[4] (NIP-10 with a marker), when it is a 64-hex pubkey.
func pubkeyIn(t nostr.Tag) string {
	for _, i := range []int{3, 4} {
		if v := tagAt(t, i); IsHex64(v) {
			return v
		}
	}
	return ""
}

// Template returns the strict NIP-22 event for c (CreatedAt left to the caller):
// E, K=4129, P for the root lesson and e, k, p for the parent. An empty
// ParentID (or one equal to RootID) makes a top-level comment on the lesson.
func (c *Comment) Template() nostr.Event {
	parentID, parentKind, parentAuthor := c.parent()
	tags := nostr.Tags{withAuthor("E", c.RootID, c.RootAuthor), {"K", strconv.Itoa(KindLesson)}}
	tags = appendOpt(tags, "P", c.RootAuthor)
	tags = append(tags, withAuthor("e", parentID, parentAuthor), nostr.Tag{"k", strconv.Itoa(parentKind)})
	tags = appendOpt(tags, "p", parentAuthor)
	return nostr.Event{Kind: KindComment, Tags: tags, Content: c.Content}
}

// parent resolves the parent reference Template writes.
func (c *Comment) parent() (id string, kind int, author string) {
	if c.ParentID == "" || c.ParentID == c.RootID {
		return c.RootID, KindLesson, cmp.Or(c.ParentAuthor, c.RootAuthor)
	}
	return c.ParentID, cmp.Or(c.ParentKind, KindComment), c.ParentAuthor
}

// withAuthor builds [name, id] or [name, id, "", author].
func withAuthor(name, id, author string) nostr.Tag {
	if author == "" {
		return nostr.Tag{name, id}
	}
	return nostr.Tag{name, id, "", author}
}
