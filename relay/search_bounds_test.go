package relay

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// TestRelay_SearchHonoursTimeBounds publishes definitions spread over two
// hours and requires every search with since and/or until to return
// exactly the events that contain the word and lie in the bounds.
func TestRelay_SearchHonoursTimeBounds(t *testing.T) {
	tr := openTestRelay(t, t.TempDir(), Limits{})
	ctx := context.Background()
	sk := nostr.GeneratePrivateKey()
	words := []string{"heron", "plover", "curlew"}
	now := nostr.Now()
	var all []*nostr.Event
	for i := range 90 {
		evt := &nostr.Event{Kind: 4199, CreatedAt: now - nostr.Timestamp(i*83),
			Tags: nostr.Tags{{"title", fmt.Sprintf("def%d", i)}, {"description", "watches the " + words[i%3]}}}
		if err := evt.Sign(sk); err != nil {
			t.Fatal(err)
		}
		if err := tr.Publish(ctx, evt); err != nil {
			t.Fatal(err)
		}
		all = append(all, evt)
	}
	ts := func(d int) *nostr.Timestamp { v := now - nostr.Timestamp(d); return &v }
	bounds := [][2]*nostr.Timestamp{{ts(3000), nil}, {nil, ts(3000)}, {ts(4000), ts(1000)}, {ts(83 * 10), ts(83 * 10)},
		{ts(83*20 + 1), ts(83*10 - 1)}, {ts(100), ts(200)}, {ts(100_000), nil}}
	for _, word := range words {
		for _, b := range bounds {
			f := nostr.Filter{Search: word, Since: b[0], Until: b[1], Limit: 500}
			got, err := tr.QuerySync(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, evt := range all {
				if desc := evt.Tags.Find("description"); desc != nil && strings.Contains(desc[1], word) && f.Matches(evt) {
					want = append(want, evt.ID)
				}
			}
			if ids := eventIDs(got); !slices.Equal(ids, sortedStrings(want)) {
				t.Fatalf("%v: %d events, want %d", f, len(ids), len(want))
			}
		}
	}
}

func eventIDs(evts []*nostr.Event) []string {
	ids := make([]string, len(evts))
	for i, evt := range evts {
		ids[i] = evt.ID
	}
	slices.Sort(ids)
	return ids
}
