package pgstore

import (
	"encoding/json"
	"strconv"
	"strings"

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
