package relay

import (
	"context"
	"fmt"
	"strings"

	"github.com/fiatjaf/eventstore"
	"github.com/fiatjaf/eventstore/bluge"
	"github.com/nbd-wtf/go-nostr"
)

// searchableTags lists, per kind, the tags whose values NIP-50 search
// matches (besides content). Kinds not listed here are not indexed.
var searchableTags = map[int][]string{
	4199: {"title", "description", "role", "use-criteria"}, // agent definitions
	4129: {"title", "category", "t"},                       // lessons
	1111: {},                                               // lesson comments: content only
}

// searchIndex is the NIP-50 full-text index. It stores only ids; the events
// themselves are read back from the event store.
type searchIndex struct {
	bluge *bluge.BlugeBackend
}

func openSearchIndex(path string, events eventstore.Store) (*searchIndex, error) {
	b := &bluge.BlugeBackend{Path: path, RawEventStore: events}
	if err := b.Init(); err != nil {
		return nil, fmt.Errorf("open search index: %w", err)
	}
	return &searchIndex{bluge: b}, nil
}

// SearchText is the text the index holds for evt, or "" when evt's kind is
// not searchable.
func SearchText(evt *nostr.Event) string {
	names, ok := searchableTags[evt.Kind]
	if !ok {
		return ""
	}
	var b strings.Builder
	for _, tag := range evt.Tags {
		if len(tag) >= 2 && contains(names, tag[0]) {
			b.WriteString(tag[1])
			b.WriteByte('\n')
		}
	}
	b.WriteString(evt.Content)
	return b.String()
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// index adds evt's searchable text; events of other kinds are ignored.
func (x *searchIndex) index(evt *nostr.Event) error {
	text := SearchText(evt)
	if text == "" {
		return nil
	}
	doc := *evt
	doc.Content = text
	if err := x.bluge.SaveEvent(context.Background(), &doc); err != nil {
		return fmt.Errorf("index %s: %w", evt.ID, err)
	}
	return nil
}

// remove drops evt from the index (a no-op when it was never indexed).
func (x *searchIndex) remove(evt *nostr.Event) error {
	if _, ok := searchableTags[evt.Kind]; !ok {
		return nil
	}
	return x.bluge.DeleteEvent(context.Background(), evt)
}

// query runs a NIP-50 search. The index knows kinds, authors and time
// bounds; the caller re-checks every other filter field.
func (x *searchIndex) query(ctx context.Context, filter nostr.Filter) (chan *nostr.Event, error) {
	return x.bluge.QueryEvents(ctx, filter)
}

func (x *searchIndex) close() error {
	x.bluge.Close()
	return nil
}
