package pgstore

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/nbd-wtf/go-nostr"
)

// tagSep joins a tag's key and value in the tagvalues column: "e\x1f<id>".
// Every tag with a value is indexed, whatever the length of its key, so
// that tag filters are exact (the key is part of the match).
const tagSep = "\x1f"

// searchTags are the tags whose values are searchable beside the content.
var searchTags = []string{"title", "summary", "name", "description", "alt", "t", "d"}

// row is an event as the columns of pgstore_events.
type row struct {
	tags      []byte
	addr      *string
	expiresAt *int64
	tagvalues []string
	search    string
}

func toRow(evt *nostr.Event, text func(*nostr.Event) string) (row, error) {
	if !storable(evt) {
		return row{}, ErrUnstorable
	}
	tags, err := json.Marshal(evt.Tags)
	if err != nil {
		return row{}, err
	}
	if text == nil {
		text = searchText
	}
	r := row{tags: tags, addr: address(evt), expiresAt: expiration(evt), search: text(evt)}
	r.tagvalues = make([]string, 0, len(evt.Tags))
	for _, tag := range evt.Tags {
		if len(tag) >= 2 {
			r.tagvalues = append(r.tagvalues, tag[0]+tagSep+tag[1])
		}
	}
	return r, nil
}

// storable reports whether PostgreSQL can hold evt's strings: valid UTF-8
// without NUL (text and jsonb refuse both, which would fail the whole
// batch's transaction).
func storable(evt *nostr.Event) bool {
	ok := func(s string) bool { return utf8.ValidString(s) && !strings.Contains(s, "\x00") }
	if !ok(evt.Content) {
		return false
	}
	for _, tag := range evt.Tags {
		for _, v := range tag {
			if !ok(v) {
				return false
			}
		}
	}
	return true
}

// address is the replacement key of a replaceable ("kind:pubkey:") or
// addressable ("kind:pubkey:d") event, nil for any other.
func address(evt *nostr.Event) *string {
	var a string
	switch {
	case nostr.IsReplaceableKind(evt.Kind):
		a = strconv.Itoa(evt.Kind) + ":" + evt.PubKey + ":"
	case nostr.IsAddressableKind(evt.Kind):
		a = strconv.Itoa(evt.Kind) + ":" + evt.PubKey + ":" + evt.Tags.GetD()
	default:
		return nil
	}
	return &a
}

// expiration is the NIP-40 expiration timestamp, nil when absent or invalid.
func expiration(evt *nostr.Event) *int64 {
	tag := evt.Tags.Find("expiration")
	if tag == nil {
		return nil
	}
	ts, err := strconv.ParseInt(tag[1], 10, 64)
	if err != nil {
		return nil
	}
	return &ts
}

// searchText is what NIP-50 search sees: the content and the values of a
// few descriptive tags.
func searchText(evt *nostr.Event) string {
	var b strings.Builder
	b.WriteString(evt.Content)
	for _, tag := range evt.Tags {
		if len(tag) >= 2 && containsStr(searchTags, tag[0]) {
			b.WriteString(" ")
			b.WriteString(tag[1])
		}
	}
	return b.String()
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
